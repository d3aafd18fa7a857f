"""The evidence one comparison weighs: every sample of a metric, the compared cases of a group (its strata), and
the tests run on them, two-staged when the current runs were adaptive."""

from __future__ import annotations

import dataclasses
import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from adk_eval_gate.baseline.evidence import evidence_test
from adk_eval_gate.baseline.stages import StagedPair
from adk_eval_gate.baseline.stats import TestResult, combine_stages, permutation_test, stratified_test
from adk_eval_gate.results.results_format import MetricResult


def samples(metric: MetricResult) -> list[float]:
    """Every per-invocation score of every run: all the evidence there is."""
    values = [
        item.score for run in metric.runs if run is not None for item in run.per_invocation if item.score is not None
    ]
    if not values and metric.score is not None:
        values = [metric.score]
    return values


# The estimates of adaptive runs (models.ESTIMATE): the table's baseline → current are the means the delta is from.
FIRST_ROUND = "first round vs whole baseline"
EXTRA_ROUND = "extra runs vs baseline test half"


def first_round_means(staged: Sequence[StagedPair]) -> tuple[float, float] | None:
    """(baseline, current) means over the cases whose first-round delta exists, so that their difference is
    the group's delta (the mean of those cases' first-round deltas)."""
    cases = [p for p in staged if p.first and p.baseline]
    if not cases:
        return None
    return (
        statistics.fmean(statistics.fmean(p.baseline) for p in cases),
        statistics.fmean(statistics.fmean(p.first) for p in cases),
    )


@dataclass
class Strata:
    """The compared cases of one agent × eval set × criterion, kept for the pooled verdict."""

    pairs: list[tuple[list[float], list[float]]]
    passed_baseline: list[bool]
    passed_current: list[bool]
    staged: list[StagedPair] | None = None  # set when the current runs were adaptive


def set_test(pairs: Sequence[tuple[Sequence[float], Sequence[float]]]) -> TestResult | None:
    """The test of one group's cases: the per-case evidence test (evidence.py) when every case's permutation
    distribution can be enumerated (always, on 0/1 scores), else the unweighted stratified test."""
    return evidence_test(pairs) or stratified_test(pairs)


def _stage_test(pairs: list[tuple[list[float], list[float]]]) -> TestResult | None:
    return set_test([(b, c) for b, c in pairs if b and c]) if any(b and c for b, c in pairs) else None


def extra_round_drop(staged: Sequence[StagedPair]) -> float | None:
    """The group's change as the extra round measures it: each case that got extra runs adds its extra runs' mean
    minus the baseline's test half's, divided by the group's cases; None when no case got extra runs.

    Why: the size check (`compare.verdict_for`) needs an estimate of the drop. The first round against the whole
    baseline is unbiased but, at two or three runs a case, noisy enough to put a real 10-point drop under a
    5-point tolerance about one pull request in ten. Swapping the extra runs in for the first round of the cases
    that had them biases it toward "no drop" (the cases that stopped looked better by selection). This estimate
    leaves the stopped cases out instead: for the cases that went on, both sides are samples that took no part in
    choosing them, so it is unbiased for *their* change; it is the group's change when the cases that stopped did
    not change, and smaller than a drop they shared."""
    cases = [p for p in staged if p.first and p.baseline]
    moved = [statistics.fmean(p.extra) - statistics.fmean(p.test) for p in cases if p.extra and p.test]
    return math.fsum(moved) / len(cases) if moved else None


def group_test(strata: Strata) -> TestResult | None:
    """The test over the cases of one group; for adaptive runs, the two-stage one, whose `extra_delta` is the
    change the extra round measures (`extra_round_drop`)."""
    if strata.staged is None:
        return set_test(strata.pairs)
    first = _stage_test([(p.selection, p.first) for p in strata.staged])
    extra = _stage_test([(p.test, p.extra) for p in strata.staged])
    deltas = [d for d in (p.first_delta() for p in strata.staged) if d is not None]
    combined = combine_stages(first, extra, statistics.fmean(deltas) if deltas else 0.0)
    extra_delta = extra_round_drop(strata.staged)
    if combined is None or extra_delta is None:
        return combined
    return dataclasses.replace(combined, extra_delta=extra_delta)


def case_test(staged: StagedPair) -> TestResult | None:
    first = permutation_test(staged.selection, staged.first) if staged.selection and staged.first else None
    extra = permutation_test(staged.test, staged.extra) if staged.test and staged.extra else None
    return combine_stages(first, extra, staged.case_delta() or 0.0)
