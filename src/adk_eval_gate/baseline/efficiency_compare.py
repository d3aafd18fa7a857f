"""Did the pull request make the agent more expensive, slower or chattier? Per agent × eval set × usage metric,
the per-run usage of every case against the baseline's, by the same stratified permutation test as the scores.

Each case's runs are divided by that case's mean over both sides (a scale the permutations do not change, so the
test stays exact), which makes the statistic the average relative change over cases: a case of 100 tokens and
one of 10,000 count alike. A verdict needs evidence and size: `regressed` when the increase is significant
(Holm over every efficiency row at gate.alpha) and at least the metric's tolerance (`gate.efficiency_tolerance`).
For adaptive runs only the first round counts: the extra runs went to cases chosen for their scores, and a run
that skipped its tools is also a cheaper one.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable

from adk_eval_gate.baseline.comparison_format import EfficiencyMetric, EfficiencyRow
from adk_eval_gate.baseline.row_notes import EfficiencyNote
from adk_eval_gate.baseline.stats import TestResult, holm, stratified_test
from adk_eval_gate.config.workflow_settings import GateSettings
from adk_eval_gate.results.results_format import CaseResult, ResultsFile, RunUsage

METRICS: dict[EfficiencyMetric, Callable[[RunUsage], float | None]] = {
    "cost": lambda u: u.cost_usd,
    "latency": lambda u: u.latency_seconds,
    "tokens": lambda u: u.input_tokens + u.output_tokens,
    "tool_calls": lambda u: u.tool_calls,
}
CONDITIONS: dict[EfficiencyMetric, str] = {
    "cost": "cost_regression",
    "latency": "latency_regression",
    "tokens": "token_regression",
    "tool_calls": "tool_call_regression",
}
UNITS: dict[EfficiencyMetric, str] = {
    "cost": "USD",
    "latency": "s",
    "tokens": "tokens",
    "tool_calls": "tool calls",
}


def run_values(case: CaseResult, metric: EfficiencyMetric) -> list[float]:
    runs = [r for r in case.runs if r.error is None]
    if case.sampling is not None:
        runs = [r for r in runs if r.run < case.sampling.first_round_runs]
    values = [METRICS[metric](r.usage) for r in runs if r.usage is not None]
    return [float(v) for v in values if v is not None]


def _comparable(current: CaseResult, base: CaseResult) -> bool:
    return (
        current.status not in ("error", "not_run")
        and base.status not in ("error", "not_run")
        and not (current.case_hash and base.case_hash and current.case_hash != base.case_hash)
    )


def _row(
    agent: str,
    set_id: str,
    metric: EfficiencyMetric,
    pairs: list[tuple[list[float], list[float]]],
    tolerance: float,
) -> tuple[EfficiencyRow, TestResult] | None:
    strata, ratios = [], []
    for base, cur in pairs:
        scale = statistics.fmean(base + cur)
        if scale <= 0:
            continue  # nothing spent on either side: no change to see
        strata.append(([v / scale for v in base], [v / scale for v in cur]))
        base_mean = statistics.fmean(base)
        if base_mean > 0:
            ratios.append(statistics.fmean(cur) / base_mean - 1)
    if not strata or not ratios:
        return None
    test = stratified_test(strata)
    if test is None:  # only when there are no strata, excluded above
        return None
    row = EfficiencyRow(
        agent=agent,
        eval_set_id=set_id,
        metric=metric,
        baseline=statistics.fmean(statistics.fmean(b) for b, _ in pairs),
        current=statistics.fmean(statistics.fmean(c) for _, c in pairs),
        change=statistics.fmean(ratios),
        tolerance=tolerance,
        verdict="unchanged",
        reason="",
        cases_compared=len(strata),
    )
    return row, test


def _decide(
    row: EfficiencyRow, p_rise: float, p_drop: float, alpha: float, smallest_rise: float = 0.0
) -> EfficiencyRow:
    """The row with its verdict, as a new row. `smallest_rise`: the smallest p-value of a rise these samples allow;
    at alpha or above, a rise beyond tolerance is one they could never confirm (unconfirmed), not noise."""
    if row.change >= row.tolerance and p_rise < alpha:
        verdict, p, note = "regressed", p_rise, EfficiencyNote(kind="regressed", p=p_rise, alpha=alpha)
    elif row.change <= -row.tolerance and p_drop < alpha:
        verdict, p, note = "improved", p_drop, EfficiencyNote(kind="improved", p=p_drop, alpha=alpha)
    elif abs(row.change) < row.tolerance:
        p = min(p_rise, p_drop)
        verdict, note = "unchanged", EfficiencyNote(kind="within", p=p, alpha=alpha)
    else:
        p = p_rise if row.change > 0 else p_drop
        unconfirmed = row.change > 0 and smallest_rise >= alpha
        smallest = smallest_rise if unconfirmed else None
        verdict = "inconclusive"
        note = EfficiencyNote(kind="beyond", p=p, alpha=alpha, unconfirmed=unconfirmed, smallest=smallest)
    return row.model_copy(update={"verdict": verdict, "p_value": p, "note": note})


def compare_efficiency(current: ResultsFile, baseline: ResultsFile | None, gate: GateSettings) -> list[EfficiencyRow]:
    if baseline is None:
        return []
    base_sets = {(s.agent, s.eval_set_id): s for s in baseline.eval_sets}
    found: list[tuple[EfficiencyRow, TestResult]] = []
    for current_set in current.eval_sets:
        base_set = base_sets.get((current_set.agent, current_set.eval_set_id))
        if base_set is None:
            continue
        base_cases = {c.eval_id: c for c in base_set.cases}
        matched = [
            (c, base_cases[c.eval_id])
            for c in current_set.cases
            if c.eval_id in base_cases and _comparable(c, base_cases[c.eval_id])
        ]
        for metric in METRICS:
            pairs = [(run_values(b, metric), run_values(c, metric)) for c, b in matched]
            pairs = [(b, c) for b, c in pairs if b and c]
            made = (
                _row(
                    current_set.agent,
                    current_set.eval_set_id,
                    metric,
                    pairs,
                    gate.efficiency_tolerance[metric],
                )
                if pairs
                else None
            )
            if made is not None:
                found.append(made)
    # one Holm family per direction; tests that could never reach significance leave it (as for the scores).
    # Joined on the row's subject (agent, eval set, metric: one row each), never on the object's identity.
    adjusted = {_key(row): [test.p_rise, test.p_drop] for row, test in found}
    smallest_p: tuple[Callable[[TestResult], float], ...] = (lambda t: t.min_p_rise, lambda t: t.min_p_drop)
    for side, smallest in enumerate(smallest_p):
        members = [(row, test) for row, test in found if smallest(test) < gate.alpha]
        for (row, _), value in zip(members, holm([adjusted[_key(row)][side] for row, _ in members]), strict=True):
            adjusted[_key(row)][side] = value
    decided = []
    for row, test in found:
        p_rise, p_drop = adjusted[_key(row)]
        decided.append(_decide(row, p_rise, p_drop, gate.alpha, test.min_p_rise))
    return decided


def _key(row: EfficiencyRow) -> tuple[str, str, str]:
    return (row.agent, row.eval_set_id, row.metric)
