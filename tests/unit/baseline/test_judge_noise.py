"""A case's drop within its judge's own disagreement is not an agent regression (baseline/judge_noise.py): the row
is inconclusive, its reason and the comment say how often the judge disagrees with itself; a drop larger than that,
or one whose evidence is not whole, stands."""

from __future__ import annotations

import statistics

import pytest

from adk_eval_gate.baseline.compare import compare
from adk_eval_gate.baseline.judge_noise import judge_noise_bound, judged_side
from adk_eval_gate.baseline.row_notes import VerdictNote
from adk_eval_gate.baseline.stores import LoadedBaseline, LoadOutcome, identity_of
from adk_eval_gate.config.workflow_settings import GateSettings
from adk_eval_gate.criteria.judge_agreement import pooled
from adk_eval_gate.gate.comparison_file import build_comparison
from adk_eval_gate.gate.reasons import reason
from adk_eval_gate.report.markdown import render_report
from adk_eval_gate.results.results_format import JudgeNoise, ResultsFile
from tests.support.report_data import RESPONSE, Case, results_file

RUNS = 4


def judged(per_run: list[list[float]], *, unjudged: str | None = None, keep: bool = True) -> ResultsFile:
    """One case, RUNS runs of one turn, each turn scored by the majority of its judgements (ties invalid, as ADK)."""
    scores = [[1.0 if 2 * sum(j) > len(j) else 0.0] for j in per_run]
    results = results_file({("a", "s"): [Case("wobbly", {RESPONSE: scores})]})
    metric = results.eval_sets[0].cases[0].metrics[RESPONSE]
    for run, judgements in zip(metric.runs, per_run, strict=True):
        assert run is not None
        turn = run.per_invocation[0]
        turn.judgements = judgements if keep else None
        turn.unjudged = unjudged
    found = pooled(per_run)
    metric.judge_noise = (
        JudgeNoise(
            judgements=found.judgements,
            invocations=len(per_run),
            pairs=found.pairs,
            flip_rate=found.flip_rate,
            unjudged=int(unjudged is not None) * len(per_run),
        )
        if keep
        else None
    )
    return results


# The judge leans valid 3 in 5 on the baseline's answer, 2 in 5 on the pull request's (cached: every run shares them)
LEANS_VALID = [[1.0, 1.0, 1.0, 0.0, 0.0]] * RUNS
LEANS_INVALID = [[1.0, 1.0, 0.0, 0.0, 0.0]] * RUNS


def only_row(base: ResultsFile, now: ResultsFile):
    (row,) = compare(now, base, lambda _: 0.05, 0.05).rows
    return row


def test_a_majority_flip_within_the_judges_disagreement_is_inconclusive_not_a_regression():
    row = only_row(judged(LEANS_VALID), judged(LEANS_INVALID))
    # majority-voted: 1 → 0 in all 4 runs (p = 1/70): a regression without the judges' evidence
    assert row.verdict == "inconclusive" and row.baseline == 1.0 and row.current == 0.0
    note = row.note
    assert isinstance(note, VerdictNote) and note.kind == "within_judge_noise"
    assert note.judge_flip == pytest.approx(0.6)  # 3 × 2 of 10 pairs disagree, on both sides
    assert note.judge_delta == pytest.approx(-0.2)
    # judge-averaged 0.6 → 0.4, one turn of 5 independent judgements a side: spread sqrt(0.3/5 · 2)
    spread = (0.3 / 5 * 2) ** 0.5
    assert note.p == pytest.approx(1 - statistics.NormalDist().cdf(0.2 / spread))
    assert "the judge disagrees with itself on this case 60% of the time" in reason(row)
    assert "within judge noise, not an agent regression" in reason(row)


def test_the_same_rows_without_judge_noise_regress():
    """Control: the same majority-voted scores with unanimous judgements are the agent's drop."""
    row = only_row(judged([[1.0] * 5] * RUNS), judged([[0.0] * 5] * RUNS))
    assert row.verdict == "regressed" and row.note.kind == "dropped"


def test_a_drop_larger_than_the_judge_explains_stands():
    # the judge now calls the answer valid 1 in 5 (flip rate 0.4 on this side): judge-averaged 1.0 → 0.2
    row = only_row(judged([[1.0] * 5] * RUNS), judged([[1.0, 0.0, 0.0, 0.0, 0.0]] * RUNS))
    assert row.verdict == "regressed" and row.note.kind == "dropped"


def test_more_judgements_narrow_what_the_judge_explains():
    """Re-judging: the same leanings over 20 judgements a turn are no longer within the judge's noise."""
    many_valid = [[1.0] * 12 + [0.0] * 8] * RUNS
    many_invalid = [[1.0] * 6 + [0.0] * 14] * RUNS  # 0.6 → 0.3
    few = judge_noise_bound(
        judged_side(judged(LEANS_VALID).eval_sets[0].cases[0].metrics[RESPONSE]),
        judged_side(judged(LEANS_INVALID).eval_sets[0].cases[0].metrics[RESPONSE]),
        0.05,
    )
    assert few[0] > 0.2
    row = only_row(judged(many_valid), judged(many_invalid))
    assert row.verdict == "regressed"


@pytest.mark.parametrize("side", ["baseline", "current"])
def test_evidence_that_is_not_whole_never_excuses(side):
    """An older baseline without judgements, or re-judging that stopped short: the drop stands (fail closed)."""
    missing = {"keep": False} if side == "baseline" else {"unjudged": "re-judging stopped: run.max_cost_usd"}
    base = judged(LEANS_VALID, **missing) if side == "baseline" else judged(LEANS_VALID)
    now = judged(LEANS_INVALID, **missing) if side == "current" else judged(LEANS_INVALID)
    assert only_row(base, now).verdict == "regressed"


def test_the_comment_says_how_often_the_judge_disagrees_and_the_case_does_not_fail_the_gate():
    base, now = judged(LEANS_VALID), judged(LEANS_INVALID)
    gate = GateSettings(fail_on=["case_regression", "error"])
    comparison = build_comparison(now, LoadOutcome(LoadedBaseline(base, identity_of(base, "b"))), gate)
    (row,) = comparison.rows
    assert row.verdict == "inconclusive"
    assert "the judge disagrees with itself on this case 60% of the time" in row.reason  # comparison.json
    assert comparison.gate.verdict == "pass" and comparison.gate.failures == []
    report = render_report(comparison, now, {})
    assert "the judge disagrees with itself on this case 60% of the time" in report
    # control: with unanimous judges the same case fails the gate
    loud = build_comparison(
        judged([[0.0] * 5] * RUNS),
        LoadOutcome(LoadedBaseline(judged([[1.0] * 5] * RUNS), identity_of(base, "b"))),
        gate,
    )
    assert loud.gate.verdict == "fail" and len(loud.gate.failures) == 1
