"""Compares a results file with its baseline: case × criterion, agent × eval set × criterion, and agent ×
criterion pooled over all its eval sets.

A verdict needs both evidence and size: `regressed` when the drop is significant after correcting for the run's
many comparisons *and* at least the criterion's tolerance; `improved` likewise upwards; `unchanged` when the
change is within tolerance; `inconclusive` when it is larger than tolerance but could be noise. Cases whose eval
case or criterion config changed since the baseline are `not_comparable`, never silently compared.

Which verdicts gate: the pooled and the eval-set ones, as one family under Holm, so the chance that anything in
it cries wolf stays at most `alpha`. A test that could not be significant whatever the scores (one case with
one sample a side: its smallest possible p-value is 0.5) cannot cry wolf either, so it is left out of the family
instead of diluting it — that is what lets ten one-case eval sets that all broke fail the gate through their
pooled verdict. Per-case rows are informational, under a false discovery rate (Benjamini–Hochberg).
"""

from __future__ import annotations

import dataclasses
import statistics
from collections import Counter
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar, cast

from adk_eval_gate.baseline.case_rows import CaseComparison, case_row
from adk_eval_gate.baseline.comparison_format import DriftRow, PooledSummary, Row, Summary, Verdict
from adk_eval_gate.baseline.judge_noise import excuse_judge_noise
from adk_eval_gate.baseline.row_notes import StatusNote, VerdictNote
from adk_eval_gate.baseline.stats import (
    TestResult,
    benjamini_hochberg,
    holm,
)
from adk_eval_gate.baseline.strata import (
    FIRST_ROUND,
    Strata,
    first_round_means,
    group_test,
    samples,
)
from adk_eval_gate.results.results_format import EvalSetResult, ResultsFile

__all__ = ["CaseComparison", "Compared", "compare", "decide_gating", "samples", "verdict_for"]


Decided = Row | Summary | PooledSummary | DriftRow
Verdicted = TypeVar("Verdicted", bound=Decided)


@dataclass(frozen=True)
class _Pending(Generic[Verdicted]):
    row: Verdicted
    test: TestResult | None
    tolerance: float
    group: tuple[str, str]  # (agent, criterion): where an inconclusive row's evidence is pooled


@dataclass(frozen=True)
class Compared:
    """What `compare` returns, new and never edited after: the pooled, eval-set and case verdicts, and the
    `also_gating` rows it was handed, decided in the same family, in the order given."""

    pooled: list[PooledSummary]
    summaries: list[Summary]
    rows: list[Row]
    also_gating: list[DriftRow | Summary | PooledSummary]


def verdict_for(
    delta: float, test: TestResult | None, tolerance: float, p_drop: float, p_rise: float, alpha: float
) -> tuple[Verdict, float | None, VerdictNote]:
    """The verdict rule, shared by every comparison and by bench/gate_calibration.py."""
    if test is None:  # one sample a side: one flip of a noisy agent looks exactly like a real change
        if abs(delta) < tolerance:
            return "unchanged", None, VerdictNote(kind="one_sample_within", delta=delta, tolerance=tolerance)
        return "inconclusive", None, VerdictNote(kind="one_sample_beyond", delta=delta, tolerance=tolerance)
    # adaptive runs: the extra round's fresh samples may show the size the first round's noisier estimate missed
    drop = delta if test.extra_delta is None else min(delta, test.extra_delta)
    if drop < 0 and p_drop < alpha and -drop >= tolerance:
        method = test.method if drop == delta else f"{test.method}; size from the extra runs vs the baseline test half"
        dropped = VerdictNote(kind="dropped", delta=drop, tolerance=tolerance, p=p_drop, alpha=alpha, method=method)
        return "regressed", p_drop, dropped
    if delta > 0 and p_rise < alpha and delta >= tolerance:
        rose = VerdictNote(kind="rose", delta=delta, tolerance=tolerance, p=p_rise, alpha=alpha, method=test.method)
        return "improved", p_rise, rose
    if abs(delta) < tolerance:
        return "unchanged", min(p_drop, p_rise), VerdictNote(kind="within", delta=delta, tolerance=tolerance)
    p = p_drop if delta < 0 else p_rise
    return "inconclusive", p, VerdictNote(kind="beyond", delta=delta, tolerance=tolerance, p=p, alpha=alpha)


def _decide(
    pending: _Pending[Verdicted], p_drop: float, p_rise: float, alpha: float, pooled: set[tuple[str, str]]
) -> Verdicted:
    """The row again, with its verdict, p-value and note."""
    row = pending.row
    delta = row.delta or 0.0
    verdict, p_value, note = verdict_for(delta, pending.test, pending.tolerance, p_drop, p_rise, alpha)
    update: dict[str, object] = {}
    if pending.test is None:
        update["values"] = (row.baseline, row.current)
    if verdict == "inconclusive":
        test = pending.test
        smallest = None if test is None else test.min_p_drop if delta < 0 else test.min_p_rise
        if not isinstance(row, Row) and smallest is not None and smallest >= alpha:
            update |= {"kind": "cannot_reach", "smallest": smallest, "alpha": alpha}
        if isinstance(row, Row):
            update["counted_in"] = "eval_set_and_pooled" if pending.group in pooled else "eval_set"
        elif isinstance(row, Summary) and pending.group in pooled:
            update["counted_in"] = "pooled"
    note = note.model_copy(update=update)
    # model_copy keeps the row's class; mypy sees only the bound
    return cast(Verdicted, row.model_copy(update={"verdict": verdict, "p_value": p_value, "note": note}))


def _decide_family(
    pending: Sequence[_Pending[Verdicted]],
    adjust: Callable[[list[float]], list[float]],
    level: float,
    pooled: set[tuple[str, str]],
    *,
    leave_out_hopeless: bool,
) -> list[Verdicted]:
    """Adjusts each direction's p-values over the family, then decides every row of it, in order."""
    tested = [(i, p.test) for i, p in enumerate(pending) if p.test is not None]
    adjusted = {i: [test.p_drop, test.p_rise] for i, test in tested}
    smallest_p: tuple[Callable[[TestResult], float], ...] = (lambda t: t.min_p_drop, lambda t: t.min_p_rise)
    for side, smallest in enumerate(smallest_p):
        # A test whose smallest possible p-value is not below the level can never reject, so it can never raise a
        # false alarm: leaving it out keeps the family-wise rate at the level (Tarone) and stops it diluting the rest.
        members = [i for i, test in tested if not leave_out_hopeless or smallest(test) < level]
        values = adjust([adjusted[i][side] for i in members]) if members else []
        for i, value in zip(members, values, strict=True):
            adjusted[i][side] = value
    sides = [adjusted.get(i, [1.0, 1.0]) for i in range(len(pending))]
    return [_decide(p, p_drop, p_rise, level, pooled) for p, (p_drop, p_rise) in zip(pending, sides, strict=True)]


def _pooled_over(row: PooledSummary) -> PooledSummary:
    """A pooled verdict's note also says what it pooled."""
    assert isinstance(row.note, VerdictNote)  # decided above
    note = row.note.model_copy(update={"pooled_over": (row.cases_compared, row.eval_sets_compared)})
    return row.model_copy(update={"note": note})


def _set_key(summary: Summary) -> tuple[str, str, str]:
    return (summary.agent, summary.eval_set_id, summary.criterion)


def _index(results: ResultsFile | None) -> dict[tuple[str, str], EvalSetResult]:
    return {(s.agent, s.eval_set_id): s for s in results.eval_sets} if results else {}


def _pooled_row(agent: str, name: str, per_set: list[Strata]) -> tuple[PooledSummary, TestResult | None]:
    pairs = [pair for strata in per_set for pair in strata.pairs]
    staged = [p for strata in per_set for p in strata.staged or ()]
    # pooling adaptive with fixed eval sets would mix two designs: the two-stage test needs every case staged
    test = group_test(Strata(pairs, [], [], staged if len(staged) == len(pairs) else None))
    row = PooledSummary(
        agent=agent,
        criterion=name,
        baseline=statistics.fmean(statistics.fmean(b) for b, _ in pairs),
        current=statistics.fmean(statistics.fmean(c) for _, c in pairs),
        delta=test.delta if test else None,
        verdict="unchanged",
        reason="",
        eval_sets_compared=len(per_set),
        cases_compared=len(pairs),
        baseline_pass_rate=statistics.fmean(x for s in per_set for x in s.passed_baseline),
        current_pass_rate=statistics.fmean(x for s in per_set for x in s.passed_current),
    )
    if len(staged) == len(pairs) and (means := first_round_means(staged)):
        row = row.model_copy(update={"baseline": means[0], "current": means[1], "estimate": FIRST_ROUND})
    return row, test


Gating = tuple[Verdicted, TestResult | None, float]


def decide_gating(pending: Sequence[Gating[Verdicted]], alpha: float) -> list[Verdicted]:
    """Decides the verdicts that gate the merge — pooled, eval-set and drift ones — as one Holm family at `alpha`:
    every row again, decided, in order. `compare` decides through this, and bench/gate_calibration.py simulates the
    gate through it."""
    items = [_Pending(row, test, tolerance, (row.agent, row.criterion)) for row, test, tolerance in pending]
    pooled = {(row.agent, row.criterion) for row, _, _ in pending if isinstance(row, PooledSummary)}
    return _decide_family(items, holm, alpha, pooled, leave_out_hopeless=True)


@dataclass(frozen=True)
class _SetCriterion:
    """One agent × eval set × criterion: its summary (undecided when cases were compared), its case rows, and the
    strata its test weighed."""

    summary: Summary
    cases: list[CaseComparison]
    strata: Strata
    test: TestResult | None


def _compare_cases(
    current_set: EvalSetResult,
    base_set: EvalSetResult | None,
    name: str,
    quarantined: Collection[tuple[str, str, str, str]],
) -> tuple[list[CaseComparison], Strata]:
    """Every case of the set under one criterion, and the strata of those that count in the set's test."""
    base_cases = {c.eval_id: c for c in base_set.cases} if base_set else {}
    current_cases = {c.eval_id: c for c in current_set.cases}
    found = Strata([], [], [], [] if current_set.adaptive_runs is not None else None)
    cases = []
    for eval_id in list(current_cases) + [e for e in base_cases if e not in current_cases]:
        case = case_row(
            current_set.agent,
            current_set.eval_set_id,
            name,
            current_cases.get(eval_id),
            base_cases.get(eval_id),
            current_set,
            base_set,
        )
        left_out = (current_set.agent, current_set.eval_set_id, eval_id, name) in quarantined
        case = dataclasses.replace(case, row=case.row.model_copy(update={"quarantined": left_out}))
        cases.append(case)
        if case.pair is None or left_out:
            continue
        found.pairs.append(case.pair)
        if found.staged is not None:
            if case.staged is None:  # a case without its rounds recorded: judge the set as fixed runs
                found.staged = None
            else:
                found.staged.append(case.staged)
        found.passed_baseline.append(base_cases[eval_id].metrics[name].status == "passed")
        found.passed_current.append(current_cases[eval_id].metrics[name].status == "passed")
    return cases, found


def _set_criterion(
    current_set: EvalSetResult,
    base_set: EvalSetResult | None,
    name: str,
    quarantined: Collection[tuple[str, str, str, str]],
) -> _SetCriterion:
    cases, found = _compare_cases(current_set, base_set, name, quarantined)
    counts = Counter(c.row.verdict for c in cases)
    summary = Summary(
        agent=current_set.agent,
        eval_set_id=current_set.eval_set_id,
        criterion=name,
        baseline=None,
        current=None,
        delta=None,
        verdict="unchanged",
        reason="",
        cases_compared=len(found.pairs),
        cases_new=counts["new"],
        cases_removed=counts["removed"],
        cases_not_comparable=counts["not_comparable"],
    )
    if not found.pairs:
        return _SetCriterion(_uncompared(summary, current_set, base_set, name), cases, found, None)
    test = group_test(found)
    update: dict[str, object] = {
        "baseline": statistics.fmean(statistics.fmean(b) for b, _ in found.pairs),
        "current": statistics.fmean(statistics.fmean(c) for _, c in found.pairs),
        "baseline_pass_rate": statistics.fmean(found.passed_baseline),
        "current_pass_rate": statistics.fmean(found.passed_current),
        "delta": test.delta if test else None,
    }
    if found.staged is not None and (means := first_round_means(found.staged)):
        update |= {"baseline": means[0], "current": means[1], "estimate": FIRST_ROUND}
    return _SetCriterion(summary.model_copy(update=update), cases, found, test)


def _uncompared(summary: Summary, current_set: EvalSetResult, base_set: EvalSetResult | None, name: str) -> Summary:
    """An eval set × criterion with no case compared, and why."""
    if base_set is None or name not in base_set.criteria:
        # nothing to compare with, but every case scored: the current scores are shown, never "— → —"
        metrics = [c.metrics[name] for c in current_set.cases if name in c.metrics]
        scores = [m.score for m in metrics if m.score is not None]
        update: dict[str, object] = {"verdict": "new", "note": StatusNote(kind="set_new")}
        if scores:
            passed = [m.status == "passed" for m in metrics if m.score is not None]
            update |= {"current": statistics.fmean(scores), "current_pass_rate": statistics.fmean(passed)}
        return summary.model_copy(update=update)
    if name not in current_set.criteria:
        return summary.model_copy(update={"verdict": "removed", "note": StatusNote(kind="criterion_removed")})
    verdict = "not_comparable" if summary.cases_not_comparable else "error"
    return summary.model_copy(update={"verdict": verdict, "note": StatusNote(kind="none_compared")})


def _removed_sets(base_sets: dict[tuple[str, str], EvalSetResult], seen: set[tuple[str, str]]) -> list[Summary]:
    """Every criterion of a baseline eval set this run no longer has."""
    return [
        Summary(
            agent=agent,
            eval_set_id=set_id,
            criterion=name,
            baseline=None,
            current=None,
            delta=None,
            verdict="removed",
            reason="",
            note=StatusNote(kind="set_removed"),
        )
        for (agent, set_id), base_set in base_sets.items()
        if (agent, set_id) not in seen
        for name in base_set.criteria
    ]


def _set_criteria(
    current: ResultsFile,
    base_sets: dict[tuple[str, str], EvalSetResult],
    quarantined: Collection[tuple[str, str, str, str]],
) -> list[_SetCriterion]:
    """Every agent × eval set × criterion of the run, and of its baseline's eval sets the criteria it dropped."""
    groups: list[_SetCriterion] = []
    for current_set in current.eval_sets:
        base_set = base_sets.get((current_set.agent, current_set.eval_set_id))
        names = list(current_set.criteria) + [
            n for n in (base_set.criteria if base_set else {}) if n not in current_set.criteria
        ]
        groups += [_set_criterion(current_set, base_set, name, quarantined) for name in names]
    return groups


def _pooled_tests(groups: list[_SetCriterion]) -> list[tuple[PooledSummary, TestResult | None]]:
    """One eval set alone adds nothing to its own verdict: pool only agents × criteria compared in two or more."""
    by_agent: dict[tuple[str, str], list[Strata]] = {}
    for group in groups:
        if group.strata.pairs:
            by_agent.setdefault((group.summary.agent, group.summary.criterion), []).append(group.strata)
    return [_pooled_row(agent, name, per_set) for (agent, name), per_set in by_agent.items() if len(per_set) >= 2]


def _case_verdicts(
    groups: list[_SetCriterion],
    tolerance_for: Callable[[str], float],
    case_fdr: float,
    pooled: set[tuple[str, str]],
) -> list[Row]:
    """Every case row, those compared decided as one family under a false discovery rate, in the groups' order."""
    pending = [
        _Pending(c.row, c.test, tolerance_for(c.row.criterion), (c.row.agent, c.row.criterion))
        for g in groups
        for c in g.cases
        if c.pair is not None
    ]
    decided = iter(_decide_family(pending, benjamini_hochberg, case_fdr, pooled, leave_out_hopeless=False))
    return [next(decided) if c.pair is not None else c.row for g in groups for c in g.cases]


def compare(
    current: ResultsFile,
    baseline: ResultsFile | None,
    tolerance_for: Callable[[str], float],
    alpha: float,
    case_fdr: float = 0.05,
    *,
    quarantined: Collection[tuple[str, str, str, str]] = (),
    also_gating: Sequence[Gating[DriftRow | Summary | PooledSummary]] = (),
) -> Compared:
    """`quarantined` case × criterion rows are reported but left out of every eval-set and pooled test;
    `also_gating` verdicts (the drift gate's) join the gating Holm family and come back decided."""
    base_sets = _index(baseline)
    groups = _set_criteria(current, base_sets, quarantined)
    pooled_tested = _pooled_tests(groups)
    compared_sets = [g for g in groups if g.strata.pairs]
    gating: list[Gating[Decided]] = [(row, test, tolerance_for(row.criterion)) for row, test in pooled_tested]
    gating += [(g.summary, g.test, tolerance_for(g.summary.criterion)) for g in compared_sets]
    gating += list(also_gating)
    decided = iter(decide_gating(gating, alpha))  # in the family's order: pooled, eval sets, also_gating
    pooled = [cast(PooledSummary, next(decided)) for _ in pooled_tested]
    # joined on the eval set's subject (agent, eval set, criterion: one group each), never on the object's identity
    decided_sets = {_set_key(g.summary): cast(Summary, next(decided)) for g in compared_sets}
    also = cast(list[DriftRow | Summary | PooledSummary], list(decided))
    rows = _case_verdicts(groups, tolerance_for, case_fdr, {(p.agent, p.criterion) for p in pooled})
    rows = excuse_judge_noise(rows, current, baseline)
    summaries = [decided_sets.get(_set_key(g.summary), g.summary) for g in groups] + _removed_sets(
        base_sets, {(s.agent, s.eval_set_id) for s in current.eval_sets}
    )
    pooled = [_pooled_over(p) for p in pooled]
    return Compared(pooled, summaries, rows, also)
