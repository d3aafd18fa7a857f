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

import statistics
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass

from adk_eval_gate.baseline.models import DriftRow, PooledSummary, Row, Summary, Verdict
from adk_eval_gate.baseline.stages import StagedPair, baseline_halves, current_rounds
from adk_eval_gate.baseline.stats import (
    TestResult,
    benjamini_hochberg,
    holm,
    permutation_test,
)
from adk_eval_gate.baseline.strata import (
    EXTRA_ROUND,
    FIRST_ROUND,
    Strata,
    case_test,
    first_round_means,
    group_test,
    samples,
)
from adk_eval_gate.results.models import CaseResult, EvalSetResult, ResultsFile


def _fmt(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3f}"


@dataclass
class _Pending:
    row: Row | Summary | PooledSummary | DriftRow
    test: TestResult | None
    tolerance: float
    group: tuple[str, str]  # (agent, criterion): where an inconclusive row's evidence is pooled


def verdict_for(
    delta: float, test: TestResult | None, tolerance: float, p_drop: float, p_rise: float, alpha: float
) -> tuple[Verdict, float | None, str]:
    """The verdict rule, shared by every comparison and by bench/gate_calibration.py."""
    if test is None:  # one sample a side: one flip of a noisy agent looks exactly like a real change
        if abs(delta) < tolerance:
            return "unchanged", None, f"one sample a side, changed {delta:+.3f}, within tolerance {tolerance:g}"
        return "inconclusive", None, f"one sample a side, changed {delta:+.3f}: not enough evidence alone"
    if delta < 0 and p_drop < alpha and -delta >= tolerance:
        return (
            "regressed",
            p_drop,
            f"dropped {-delta:.3f} (≥ tolerance {tolerance:g}), p = {p_drop:.2g} < {alpha:g} ({test.method})",
        )
    if delta > 0 and p_rise < alpha and delta >= tolerance:
        return (
            "improved",
            p_rise,
            f"rose {delta:.3f} (≥ tolerance {tolerance:g}), p = {p_rise:.2g} < {alpha:g} ({test.method})",
        )
    if abs(delta) < tolerance:
        return "unchanged", min(p_drop, p_rise), f"changed {delta:+.3f}, within tolerance {tolerance:g}"
    p = p_drop if delta < 0 else p_rise
    return (
        "inconclusive",
        p,
        f"changed {delta:+.3f}, beyond tolerance {tolerance:g} but p = {p:.2g} ≥ {alpha:g}: "
        "could be noise; more num_runs would settle it",
    )


def _decide(pending: _Pending, p_drop: float, p_rise: float, alpha: float, pooled: set[tuple[str, str]]) -> None:
    row = pending.row
    row.verdict, row.p_value, reason = verdict_for(
        row.delta or 0.0, pending.test, pending.tolerance, p_drop, p_rise, alpha
    )
    if pending.test is None:
        reason = f"{_fmt(row.baseline)} → {_fmt(row.current)}; {reason}"
    if row.verdict == "inconclusive":
        test = pending.test
        smallest = None if test is None else test.min_p_drop if (row.delta or 0.0) < 0 else test.min_p_rise
        if not isinstance(row, Row) and smallest is not None and smallest >= alpha:
            reason = (
                f"changed {row.delta or 0.0:+.3f}, beyond tolerance {pending.tolerance:g}, but these samples cannot "
                f"reach p < {alpha:g} (at best p = {smallest:.2g}): not enough evidence alone, so it does not gate"
            )
        if isinstance(row, Row):
            reason += (
                "; counted in the eval-set and pooled verdicts"
                if pending.group in pooled
                else "; counted in the eval-set verdict"
            )
        elif isinstance(row, Summary) and pending.group in pooled:
            reason += "; counted in the pooled verdict"
    row.reason = reason


def _decide_family(
    pending: list[_Pending],
    adjust: Callable[[list[float]], list[float]],
    level: float,
    pooled: set[tuple[str, str]],
    *,
    leave_out_hopeless: bool,
) -> None:
    """Adjusts each direction's p-values over the family, then decides every row of it."""
    tested = [p for p in pending if p.test is not None]
    adjusted = {id(p): [p.test.p_drop, p.test.p_rise] for p in tested}
    for side, smallest in enumerate((lambda t: t.min_p_drop, lambda t: t.min_p_rise)):
        # A test whose smallest possible p-value is not below the level can never reject, so it can never raise a
        # false alarm: leaving it out keeps the family-wise rate at the level (Tarone) and stops it diluting the rest.
        members = [p for p in tested if not leave_out_hopeless or smallest(p.test) < level]
        values = adjust([adjusted[id(p)][side] for p in members]) if members else []
        for p, value in zip(members, values, strict=True):
            adjusted[id(p)][side] = value
    for p in pending:
        p_drop, p_rise = adjusted.get(id(p), (1.0, 1.0))
        _decide(p, p_drop, p_rise, level, pooled)


def _index(results: ResultsFile | None) -> dict[tuple[str, str], EvalSetResult]:
    return {(s.agent, s.eval_set_id): s for s in results.eval_sets} if results else {}


def _case_row(
    agent: str,
    set_id: str,
    name: str,
    current: CaseResult | None,
    base: CaseResult | None,
    current_set: EvalSetResult | None,
    base_set: EvalSetResult | None,
    tolerance: float,
) -> tuple[Row, TestResult | None, tuple[list[float], list[float]] | None, StagedPair | None]:
    cur_metric = current.metrics.get(name) if current else None
    base_metric = base.metrics.get(name) if base else None
    row = Row(
        agent=agent,
        eval_set_id=set_id,
        eval_id=(current or base).eval_id,
        criterion=name,
        baseline=base_metric.score if base_metric else None,
        current=cur_metric.score if cur_metric else None,
        delta=None,
        verdict="unchanged",
        reason="",
    )
    if base_metric is None or cur_metric is None:
        row.verdict = "new" if base_metric is None else "removed"
        row.reason = "not in the baseline" if base_metric is None else "no longer evaluated"
        return row, None, None, None
    if base.case_hash and current.case_hash and base.case_hash != current.case_hash:
        row.verdict, row.reason = "not_comparable", "the eval case was edited since the baseline"
        return row, None, None, None
    base_config, cur_config = base_set.criteria.get(name), current_set.criteria.get(name)
    if base_config and cur_config and base_config.hash and cur_config.hash and base_config.hash != cur_config.hash:
        row.verdict = "not_comparable"
        row.reason = (
            f"the {name} configuration changed since the baseline (threshold {base_config.threshold:g} → "
            f"{cur_config.threshold:g})"
            if base_config.threshold != cur_config.threshold
            else f"the {name} options changed since the baseline"
        )
        return row, None, None, None
    if current.status == "not_run":
        row.verdict, row.reason = "error", current.reason or "not run"
        return row, None, None, None
    if current.status == "error" or base.status == "error":
        side = "current run" if current.status == "error" else "baseline"
        row.verdict, row.reason = (
            "error",
            f"the {side} errored: {(current if current.status == 'error' else base).reason}",
        )
        return row, None, None, None
    base_values, cur_values = samples(base_metric), samples(cur_metric)
    if not base_values or not cur_values:
        side = "current run" if not cur_values else "baseline"
        reason = (cur_metric if not cur_values else base_metric).reason or "no score"
        row.verdict, row.reason = "error", f"the {side} has no score: {reason}"
        return row, None, None, None
    row.baseline_samples, row.current_samples = len(base_values), len(cur_values)
    row.delta = statistics.fmean(cur_values) - statistics.fmean(base_values)
    sampling = current.sampling
    if current_set.adaptive_runs is not None and sampling is not None:
        staged = StagedPair(
            base_values, *baseline_halves(base_metric), *current_rounds(cur_metric, sampling.first_round_runs)
        )
        row.delta = staged.case_delta()
        if staged.extra and staged.test:
            row.baseline, row.current = statistics.fmean(staged.test), statistics.fmean(staged.extra)
            row.estimate = EXTRA_ROUND
        elif staged.first:
            row.baseline, row.current = statistics.fmean(staged.baseline), statistics.fmean(staged.first)
            row.estimate = FIRST_ROUND
        return row, case_test(staged), (base_values, cur_values), staged
    return row, permutation_test(base_values, cur_values), (base_values, cur_values), None


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
        row.baseline, row.current = means
        row.estimate = FIRST_ROUND
    return row, test


Gating = tuple[Summary | PooledSummary | DriftRow, TestResult | None, float]


def decide_gating(pending: Sequence[Gating], alpha: float) -> None:
    """Decides the verdicts that gate the merge — pooled, eval-set and drift ones — as one Holm family at `alpha`.
    `compare` decides through this, and bench/gate_calibration.py simulates the gate through it."""
    items = [_Pending(row, test, tolerance, (row.agent, row.criterion)) for row, test, tolerance in pending]
    pooled = {(row.agent, row.criterion) for row, _, _ in pending if isinstance(row, PooledSummary)}
    _decide_family(items, holm, alpha, pooled, leave_out_hopeless=True)


def compare(
    current: ResultsFile,
    baseline: ResultsFile | None,
    tolerance_for: Callable[[str], float],
    alpha: float,
    case_fdr: float = 0.05,
    *,
    quarantined: Collection[tuple[str, str, str, str]] = (),
    also_gating: Sequence[Gating] = (),
) -> tuple[list[PooledSummary], list[Summary], list[Row]]:
    """`quarantined` case × criterion rows are reported but left out of every eval-set and pooled test;
    `also_gating` verdicts (the drift gate's) join the gating Holm family."""
    base_sets = _index(baseline)
    rows: list[Row] = []
    summaries: list[Summary] = []
    case_pending: list[_Pending] = []
    set_pending: list[_Pending] = []
    by_agent: dict[tuple[str, str], list[Strata]] = {}
    seen_sets = set()
    for current_set in current.eval_sets:
        key = (current_set.agent, current_set.eval_set_id)
        seen_sets.add(key)
        base_set = base_sets.get(key)
        base_cases = {c.eval_id: c for c in base_set.cases} if base_set else {}
        current_cases = {c.eval_id: c for c in current_set.cases}
        names = list(current_set.criteria) + [
            n for n in (base_set.criteria if base_set else {}) if n not in current_set.criteria
        ]
        for name in names:
            tolerance = tolerance_for(name)
            group = (current_set.agent, name)
            found = Strata([], [], [], [] if current_set.adaptive_runs is not None else None)
            counts = {"new": 0, "removed": 0, "not_comparable": 0}
            for eval_id in list(current_cases) + [e for e in base_cases if e not in current_cases]:
                row, test, pair, staged = _case_row(
                    current_set.agent,
                    current_set.eval_set_id,
                    name,
                    current_cases.get(eval_id),
                    base_cases.get(eval_id),
                    current_set,
                    base_set,
                    tolerance,
                )
                rows.append(row)
                if row.verdict in counts:
                    counts[row.verdict] += 1
                row.quarantined = (row.agent, row.eval_set_id, row.eval_id, name) in quarantined
                if pair is not None and row.quarantined:
                    case_pending.append(_Pending(row, test, tolerance, group))
                elif pair is not None:
                    found.pairs.append(pair)
                    if found.staged is not None:
                        if staged is None:  # a case without its rounds recorded: judge the set as fixed runs
                            found.staged = None
                        else:
                            found.staged.append(staged)
                    case_pending.append(_Pending(row, test, tolerance, group))
                    found.passed_baseline.append(base_cases[eval_id].metrics[name].status == "passed")
                    found.passed_current.append(current_cases[eval_id].metrics[name].status == "passed")
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
            if found.pairs:
                by_agent.setdefault(group, []).append(found)
                summary.baseline = statistics.fmean(statistics.fmean(b) for b, _ in found.pairs)
                summary.current = statistics.fmean(statistics.fmean(c) for _, c in found.pairs)
                summary.baseline_pass_rate = statistics.fmean(found.passed_baseline)
                summary.current_pass_rate = statistics.fmean(found.passed_current)
                test = group_test(found)
                summary.delta = test.delta if test else None
                if found.staged is not None and (means := first_round_means(found.staged)):
                    summary.baseline, summary.current = means
                    summary.estimate = FIRST_ROUND
                set_pending.append(_Pending(summary, test, tolerance, group))
            elif base_set is None or name not in base_set.criteria:
                summary.verdict, summary.reason = "new", "no baseline for this eval set and criterion yet"
            elif name not in current_set.criteria:
                summary.verdict, summary.reason = "removed", "the criterion is no longer configured"
            else:
                summary.verdict = "not_comparable" if counts["not_comparable"] else "error"
                summary.reason = "no case could be compared with the baseline"
            summaries.append(summary)
    for key, base_set in base_sets.items():
        if key not in seen_sets:
            for name in base_set.criteria:
                summaries.append(
                    Summary(
                        agent=key[0],
                        eval_set_id=key[1],
                        criterion=name,
                        baseline=None,
                        current=None,
                        delta=None,
                        verdict="removed",
                        reason="the eval set is no longer run",
                    )
                )

    # One eval set alone adds nothing to its own verdict: pool only agents × criteria seen in two or more.
    pooled: list[PooledSummary] = []
    gating: list[Gating] = []
    for (agent, name), per_set in by_agent.items():
        if len(per_set) >= 2:
            row, test = _pooled_row(agent, name, per_set)
            pooled.append(row)
            gating.append((row, test, tolerance_for(name)))
    gating += [(p.row, p.test, p.tolerance) for p in set_pending]
    gating += list(also_gating)

    decide_gating(gating, alpha)
    _decide_family(
        case_pending, benjamini_hochberg, case_fdr, {(p.agent, p.criterion) for p in pooled}, leave_out_hopeless=False
    )
    for row in pooled:
        row.reason += f"; {row.cases_compared} cases in {row.eval_sets_compared} eval sets"
    return pooled, summaries, rows
