"""One case × criterion against its baseline: compared on its samples (a permutation test, or the two-stage test of
adaptive runs), or, when it cannot be, a row that says why (new, removed, edited, reconfigured, not run, errored)."""

from __future__ import annotations

import statistics
from dataclasses import dataclass

from adk_eval_gate.baseline.comparison_format import Row, Verdict
from adk_eval_gate.baseline.provenance_changes import SCORER_CHANGED
from adk_eval_gate.baseline.row_notes import Side, StatusNote
from adk_eval_gate.baseline.stages import StagedPair, baseline_halves, current_rounds
from adk_eval_gate.baseline.stats import TestResult, permutation_test
from adk_eval_gate.baseline.strata import EXTRA_ROUND, FIRST_ROUND, case_test, samples
from adk_eval_gate.results.results_format import CaseResult, EvalSetResult, MetricResult

Pair = tuple[list[float], list[float]]  # (baseline samples, current samples) of one case


@dataclass(frozen=True)
class CaseComparison:
    """One case × criterion before its verdict; `pair` (its samples) and `test` when it could be compared, and
    `staged` when its current runs were adaptive."""

    row: Row
    test: TestResult | None = None
    pair: Pair | None = None
    staged: StagedPair | None = None


def _not_compared(
    name: str, current: CaseResult, base: CaseResult, current_set: EvalSetResult, base_set: EvalSetResult
) -> tuple[Verdict, StatusNote] | None:
    """Why a case present on both sides cannot be compared (edited, reconfigured, not run, errored), if it cannot."""
    if base.case_hash and current.case_hash and base.case_hash != current.case_hash:
        return "not_comparable", StatusNote(kind="case_edited")
    base_config, cur_config = base_set.criteria.get(name), current_set.criteria.get(name)
    if base_config and base_config.hash.startswith(SCORER_CHANGED):  # judged or scored otherwise (provenance)
        return "not_comparable", StatusNote(
            kind="scorer_changed", criterion=name, detail=base_config.hash.removeprefix(SCORER_CHANGED)
        )
    if base_config and cur_config and base_config.hash and cur_config.hash and base_config.hash != cur_config.hash:
        if base_config.threshold != cur_config.threshold:
            thresholds = (base_config.threshold, cur_config.threshold)
            return "not_comparable", StatusNote(kind="threshold_changed", criterion=name, thresholds=thresholds)
        return "not_comparable", StatusNote(kind="options_changed", criterion=name)
    if current.status == "not_run":
        return "error", StatusNote(kind="not_run", detail=current.reason)
    if current.status == "error" or base.status == "error":
        errored = current if current.status == "error" else base
        side: Side = "current run" if errored is current else "baseline"
        return "error", StatusNote(kind="errored", side=side, detail=errored.reason)
    return None


def case_row(
    agent: str,
    set_id: str,
    name: str,
    current: CaseResult | None,
    base: CaseResult | None,
    current_set: EvalSetResult,
    base_set: EvalSetResult | None,
) -> CaseComparison:
    """One case × criterion, compared when both sides have its samples; otherwise its row says why not."""
    cur_metric = current.metrics.get(name) if current else None
    base_metric = base.metrics.get(name) if base else None
    case = current or base
    assert case is not None  # a case comes from one side or the other
    row = Row(
        agent=agent,
        eval_set_id=set_id,
        eval_id=case.eval_id,
        criterion=name,
        baseline=base_metric.score if base_metric else None,
        current=cur_metric.score if cur_metric else None,
        delta=None,
        verdict="unchanged",
        reason="",
    )
    if base_metric is None or cur_metric is None:
        new = base_metric is None
        verdict: Verdict = "new" if new else "removed"
        note = StatusNote(kind="case_new" if new else "case_removed")
        return CaseComparison(row.model_copy(update={"verdict": verdict, "note": note}))
    assert current is not None and base is not None and base_set is not None  # both sides have the metric
    why_not = _not_compared(name, current, base, current_set, base_set)
    if why_not is not None:
        return CaseComparison(row.model_copy(update={"verdict": why_not[0], "note": why_not[1]}))
    base_values, cur_values = samples(base_metric), samples(cur_metric)
    if not base_values or not cur_values:
        side: Side = "current run" if not cur_values else "baseline"
        detail = (cur_metric if not cur_values else base_metric).reason
        note = StatusNote(kind="no_score", side=side, detail=detail)
        return CaseComparison(row.model_copy(update={"verdict": "error", "note": note}))
    return _sampled(row, base_values, cur_values, base_metric, cur_metric, current, current_set)


def _sampled(
    row: Row,
    base_values: list[float],
    cur_values: list[float],
    base_metric: MetricResult,
    cur_metric: MetricResult,
    current: CaseResult,
    current_set: EvalSetResult,
) -> CaseComparison:
    """A case compared on its samples: by one permutation test, or by the two-stage test of adaptive runs."""
    counts = {"baseline_samples": len(base_values), "current_samples": len(cur_values)}
    delta = statistics.fmean(cur_values) - statistics.fmean(base_values)
    sampling = current.sampling
    if current_set.adaptive_runs is None or sampling is None:
        row = row.model_copy(update=counts | {"delta": delta})
        return CaseComparison(row, permutation_test(base_values, cur_values), (base_values, cur_values))
    staged = StagedPair(
        base_values, *baseline_halves(base_metric), *current_rounds(cur_metric, sampling.first_round_runs)
    )
    update: dict[str, object] = counts | {"delta": staged.case_delta()}
    if staged.extra and staged.test:
        update |= {"baseline": statistics.fmean(staged.test), "current": statistics.fmean(staged.extra)}
        update["estimate"] = EXTRA_ROUND
    elif staged.first:
        update |= {"baseline": statistics.fmean(staged.baseline), "current": statistics.fmean(staged.first)}
        update["estimate"] = FIRST_ROUND
    return CaseComparison(row.model_copy(update=update), case_test(staged), (base_values, cur_values), staged)
