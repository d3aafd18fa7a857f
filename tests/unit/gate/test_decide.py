"""`policy.decide` on hand-built comparisons: every way a gate passes or fails, without running anything. The
decision is data (failures, gating subjects, notes); the sentences are checked where gate/wording.py makes them."""

from __future__ import annotations

import copy

import pytest

from adk_eval_gate.baseline.comparison_format import (
    DriftRow,
    EfficiencyRow,
    HistoryReport,
    Override,
    PooledSummary,
    Row,
    Summary,
    Verdict,
)
from adk_eval_gate.baseline.row_notes import Settle
from adk_eval_gate.config.workflow_settings import GateSettings
from adk_eval_gate.gate.comparison_file import gate_decision
from adk_eval_gate.gate.outcome import ComparedVerdicts, Failure, NotGating, Subject, subject_of
from adk_eval_gate.gate.policy import decide, name_who_labelled
from adk_eval_gate.results.results_format import ResultsFile
from tests.support.report_data import TRAJECTORY, Case, results_file

LABEL = "adk-eval-gate: accept regression"


def row(eval_id: str, verdict: Verdict = "unchanged", reason: str = "within", **more) -> Row:
    fields = dict(agent="a", eval_set_id="s", eval_id=eval_id, criterion=TRAJECTORY, baseline=1.0, current=1.0)
    return Row(**(fields | {"delta": 0.0, "verdict": verdict, "reason": reason} | more))


def summary(verdict: Verdict = "unchanged", reason: str = "changed +0.000", eval_set: str = "s", **more) -> Summary:
    fields = dict(agent="a", eval_set_id=eval_set, criterion=TRAJECTORY, baseline=1.0, current=1.0, delta=0.0)
    return Summary(**(fields | {"verdict": verdict, "reason": reason, "cases_compared": 2} | more))


def pooled(verdict: Verdict = "unchanged", reason: str = "pooled", **more) -> PooledSummary:
    fields = dict(agent="a", criterion=TRAJECTORY, baseline=1.0, current=1.0, delta=0.0, verdict=verdict)
    return PooledSummary(**(fields | {"reason": reason, "eval_sets_compared": 2, "cases_compared": 4} | more))


def passing_results() -> ResultsFile:
    return results_file({("a", "s"): [Case("c1", {TRAJECTORY: [[1.0]]}), Case("c2", {TRAJECTORY: [[1.0]]})]})


def sentences(decision, comparison: ComparedVerdicts):
    """The decision as comparison.json stores it, each failure quoting its verdict's reason."""
    every = [*comparison.pooled, *comparison.summaries, *comparison.rows, *comparison.efficiency]
    every += comparison.history.drift if comparison.history else []
    return gate_decision(decision, {subject_of(r): r.reason for r in every})


def texts(stored) -> list[str]:
    """Each failing condition's sentence, stored beside its data."""
    return [f.text for f in stored.failures]


def test_pass_names_what_it_looked_at():
    compared = ComparedVerdicts(pooled=(pooled(),), summaries=(summary(), summary(eval_set="t")), rows=(row("c1"),))
    decision = decide(compared, passing_results(), GateSettings())
    assert decision.verdict == "pass" and not decision.failures and not decision.gating and not decision.overridden
    assert decision.looked_at.eval_sets_compared == 2 and decision.looked_at.pooled == 1
    assert sentences(decision, compared).reason == (
        "no failing condition (regression, error, drift) in 2 eval-set comparison(s) and 1 pooled over eval sets"
    )


def test_an_eval_set_regression_fails_and_gates():
    regressed = summary("regressed", "dropped 0.500 (≥ tolerance 0.05), p = 0.01 < 0.05 (exact)")
    behind = row("c1", "regressed", "dropped alone", delta=-1.0)
    compared = ComparedVerdicts(pooled=(), summaries=(regressed,), rows=(behind,))
    decision = decide(compared, passing_results(), GateSettings())
    assert decision.verdict == "fail"
    assert decision.failures == (Failure(kind="regression", subject=subject_of(regressed)),)
    assert decision.gating == frozenset({subject_of(regressed)})
    # the case behind it is reported, not gating, and says why
    assert decision.not_gating == (NotGating(kind="behind_failing_group", subject=subject_of(behind)),)
    stored = sentences(decision, compared)
    assert texts(stored) == [f"regression: a/s {TRAJECTORY} {regressed.reason}"]
    assert stored.reason == f"1 failing condition(s); first: regression: a/s {TRAJECTORY} {regressed.reason}"


def test_a_regression_the_policy_does_not_fail_on_is_reported_with_why():
    regressed = summary("regressed", "dropped")
    alone = row("c1", "regressed", "dropped alone")
    compared = ComparedVerdicts(pooled=(), summaries=(regressed,), rows=(alone,))
    decision = decide(compared, passing_results(), GateSettings(fail_on=["error"]))
    assert decision.verdict == "pass" and decision.looked_at.regressions_not_gating == 1
    assert set(decision.not_gating) == {
        NotGating(kind="lacks_condition", subject=subject_of(regressed), condition="regression"),
        NotGating(kind="case_alone", subject=subject_of(alone), condition="case_regression"),
    }
    assert sentences(decision, compared).reason.endswith("; 1 regression(s) reported but not gating")


def test_case_regression_gates_unless_quarantined():
    flaky = row("c1", "regressed", "dropped", quarantined=True)
    broke = row("c2", "regressed", "dropped")
    compared = ComparedVerdicts(pooled=(), summaries=(), rows=(flaky, broke))
    decision = decide(compared, passing_results(), GateSettings(fail_on=["case_regression"]))
    assert [f.subject for f in decision.failures] == [subject_of(broke)]
    assert decision.not_gating == (NotGating(kind="quarantined", subject=subject_of(flaky)),)


@pytest.mark.parametrize("mode", ["fail", "warn"])
def test_an_unconfirmed_drop_fails_or_warns_as_gate_unconfirmed_says(mode):
    drop = summary("inconclusive", "changed -0.300; unconfirmed", delta=-0.3, unconfirmed=True)
    compared = ComparedVerdicts(pooled=(), summaries=(drop,), rows=())
    settle = Settle(kind="more_runs", runs=(5, 10), cases=4)
    decision = decide(compared, passing_results(), GateSettings(unconfirmed=mode), settle=settle)
    assert decision.unconfirmed == 1 and decision.settle == settle  # data: report/ says it
    if mode == "fail":
        assert decision.verdict == "fail" and decision.failures[0].kind == "unconfirmed"
        assert subject_of(drop) in decision.gating
    else:
        assert decision.verdict == "pass" and not decision.failures and not decision.gating
        # the check passes, but the headline never reads as a clean pass
        assert sentences(decision, compared).reason.startswith(
            "1 drop(s) unconfirmed, not gating (gate.unconfirmed: warn): num_runs: {min: 5, max: 10} would settle it: "
            "every case runs 5 times, a case that looks worse up to 10 (the default branch's push runs 10); no failing"
        )


def test_an_acceptance_for_the_commit_passes_a_failing_gate_visibly():
    accepted = Override(kind="comment", by="lead", at="2026-01-01T00:00:00Z", reason="judge drift", sha="ab" * 20)
    compared = ComparedVerdicts(pooled=(), summaries=(summary("regressed", "dropped"),), rows=())
    decision = decide(compared, passing_results(), GateSettings(), acceptance=accepted)
    assert decision.verdict == "pass" and decision.overridden and decision.override == accepted
    assert len(decision.failures) == 1  # still listed: the acceptance hides nothing
    assert sentences(decision, compared).reason == (
        f"accepted by @lead for commit {'ab' * 6}: judge drift despite 1 failing condition(s); "
        f"first: regression: a/s {TRAJECTORY} dropped"
    )


def test_the_override_label_passes_a_failing_gate_and_names_who_added_it():
    compared = ComparedVerdicts(pooled=(), summaries=(summary("regressed", "dropped"),), rows=())
    decision = decide(compared, passing_results(), GateSettings(), labels=[LABEL, "other"])
    assert decision.verdict == "pass" and decision.override == Override(kind="label", label=LABEL)
    named = name_who_labelled(decision, "octo", "2026-01-02T00:00:00Z")
    assert decision.override.by is None  # a new decision; the one it came from is as it was
    assert (named.override.by, named.override.at) == ("octo", "2026-01-02T00:00:00Z")
    assert sentences(named, compared).reason.startswith(
        f"accepted by the '{LABEL}' label (added by @octo at 2026-01-02T00:00:00Z) despite 1 failing condition(s)"
    )
    assert sentences(decision, compared).reason.startswith(f"accepted by the '{LABEL}' label despite")


def test_the_label_overrides_nothing_when_nothing_fails_or_the_policy_has_no_label():
    failing = ComparedVerdicts(pooled=(), summaries=(summary("regressed", "dropped"),), rows=())
    assert decide(failing, passing_results(), GateSettings(override_label=None), labels=[LABEL]).verdict == "fail"
    passing = decide(ComparedVerdicts((), (summary(),), ()), passing_results(), GateSettings(), labels=[LABEL])
    assert passing.override is None and name_who_labelled(passing, "octo", "t") == passing


def test_nothing_to_compare_passes_unless_the_policy_needs_a_baseline():
    empty = ComparedVerdicts(pooled=(), summaries=(), rows=(), has_baseline=False)
    decision = decide(empty, passing_results(), GateSettings())
    assert decision.verdict == "pass"
    assert sentences(decision, empty).reason == "no baseline yet: every case is new; the gate's conditions hold"
    strict = decide(empty, passing_results(), GateSettings(fail_on=["no_baseline"]))
    assert strict.verdict == "fail" and strict.failures == (Failure(kind="no_baseline"),)


def test_errors_fail_closed():
    results = results_file(
        {
            ("a", "s"): [
                Case("c1", {TRAJECTORY: [None]}, status="error", reason="the agent raised TimeoutError"),
                Case("c2", {TRAJECTORY: [[1.0]]}, status="not_run", reason="the spending limit was reached"),
            ]
        }
    )
    compared = ComparedVerdicts(
        pooled=(), summaries=(), rows=(), has_baseline=False, baseline_error="the store is down"
    )
    decision = decide(compared, results, GateSettings())
    assert [f.kind for f in decision.failures] == ["baseline_error", "error", "not_run"]
    assert texts(sentences(decision, compared)) == [
        "error: the baseline could not be loaded, so no regression could be seen: the store is down",
        "error: a/s c1: the agent raised TimeoutError",
        "not run: a/s c2: the spending limit was reached",
    ]


def test_a_history_that_could_not_be_used_fails_closed_once():
    history = HistoryReport(source="branch", records=0, error="the history file is corrupt")
    alone = ComparedVerdicts(pooled=(), summaries=(), rows=(), history=history)
    assert decide(alone, passing_results(), GateSettings()).failures == (
        Failure(kind="history", detail="the history file is corrupt"),
    )
    # the store failed for the baseline too: said once, as the baseline's error
    both = ComparedVerdicts(pooled=(), summaries=(), rows=(), history=history, baseline_error="the store is down")
    assert [f.kind for f in decide(both, passing_results(), GateSettings()).failures] == ["baseline_error"]


def test_drift_gates_or_is_reported_as_the_policy_says():
    drift = DriftRow(
        agent="a", criterion=TRAJECTORY, baseline=1.0, current=0.5, delta=-0.5, verdict="regressed", reason="since x"
    )
    history = HistoryReport(source="branch", records=5, merges=4, drift=[drift])
    compared = ComparedVerdicts(pooled=(), summaries=(summary(),), rows=(), history=history)
    gating = decide(compared, passing_results(), GateSettings())
    assert gating.verdict == "fail" and gating.gating == frozenset({subject_of(drift)})
    assert texts(sentences(gating, compared)) == [f"drift: a {TRAJECTORY} since x"]
    reported = decide(compared, passing_results(), GateSettings(fail_on=["regression"]))
    assert reported.verdict == "pass"
    assert reported.not_gating == (NotGating(kind="lacks_condition", subject=subject_of(drift), condition="drift"),)


def test_an_efficiency_regression_gates_only_under_its_condition():
    costly = EfficiencyRow(
        agent="a", eval_set_id="s", metric="cost", baseline=1.0, current=2.0, change=1.0, tolerance=0.2,
        verdict="regressed", reason="+100%",
    )  # fmt: skip
    compared = ComparedVerdicts(pooled=(), summaries=(), rows=(), efficiency=(costly,))
    gating = decide(compared, passing_results(), GateSettings(fail_on=["cost_regression"]))
    assert texts(sentences(gating, compared)) == ["cost regression: a/s cost +100%"]
    assert decide(compared, passing_results(), GateSettings()).not_gating == (
        NotGating(kind="lacks_condition", subject=subject_of(costly), condition="cost_regression"),
    )


def test_a_pass_rate_below_the_minimum_fails():
    results = results_file({("a", "s"): [Case("c1", {TRAJECTORY: [[0.0]]}), Case("c2", {TRAJECTORY: [[1.0]]})]})
    decision = decide(ComparedVerdicts((), (), ()), results, GateSettings(fail_on=[], min_pass_rate=0.9))
    assert decision.failures == (Failure(kind="pass_rate", rate=0.5, minimum=0.9),)
    assert texts(sentences(decision, ComparedVerdicts((), (), ()))) == ["pass rate 50.0% is below the minimum 90%"]


def test_inconclusive_and_not_comparable_fail_when_the_policy_lists_them():
    unsure = summary("inconclusive", "could be noise", delta=-0.2)
    edited = row("c1", "not_comparable", "the eval case was edited since the baseline")
    compared = ComparedVerdicts(pooled=(), summaries=(unsure,), rows=(edited,))
    decision = decide(compared, passing_results(), GateSettings(fail_on=["inconclusive", "not_comparable"]))
    assert [(f.kind, f.subject) for f in decision.failures] == [
        ("inconclusive", subject_of(unsure)),
        ("not_comparable", subject_of(edited)),
    ]


def test_a_pooled_regression_is_named_over_its_eval_sets():
    together = pooled("regressed", "dropped together")
    compared = ComparedVerdicts(pooled=(together,), summaries=(summary(),), rows=())
    decision = decide(compared, passing_results(), GateSettings())
    assert decision.failures[0].subject == Subject(scope="pooled", agent="a", criterion=TRAJECTORY, eval_sets=2)
    assert texts(sentences(decision, compared)) == [f"regression: a (all 2 eval sets) {TRAJECTORY} dropped together"]


def test_decide_edits_nothing_it_judges():
    history = HistoryReport(
        source="branch",
        records=3,
        merges=2,
        drift=[
            DriftRow(agent="a", criterion=TRAJECTORY, baseline=1, current=0, delta=-1, verdict="regressed", reason="d")
        ],
    )
    costly = EfficiencyRow(
        agent="a", eval_set_id="s", metric="tokens", baseline=1.0, current=2.0, change=1.0, tolerance=0.2,
        verdict="regressed", reason="+100%",
    )  # fmt: skip
    compared = ComparedVerdicts(
        pooled=(pooled("regressed", "p"),),
        summaries=(summary("regressed", "s"), summary("inconclusive", "u", eval_set="t", unconfirmed=True)),
        rows=(row("c1", "regressed", "r"), row("c2", "regressed", "q", quarantined=True), row("c3", "not_comparable")),
        efficiency=(costly,),
        history=history,
    )
    results = passing_results()
    before = (copy.deepcopy(compared), results.model_copy(deep=True))
    for fail_on in (["regression", "drift", "token_regression"], ["error"], ["case_regression", "not_comparable"]):
        decide(compared, results, GateSettings(fail_on=fail_on), labels=[LABEL])
    assert (compared, results) == before
    assert not any(r.gating for r in [*compared.pooled, *compared.summaries, *compared.rows, costly, *history.drift])
