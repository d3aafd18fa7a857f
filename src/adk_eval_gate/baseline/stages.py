"""The two stages of adaptive runs, as the comparison and the decider both see them.

The baseline's runs are split once, by run index: the first half (the *selection half*) is what the first round
is compared with and what decides which cases get extra runs; the second half (the *test half*) is compared
only with those extra runs. Keeping the halves apart is what makes the extra round's test exact whatever was
selected (see `stats.combine_stages`).
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass

from adk_eval_gate.baseline.stats import permutation_test
from adk_eval_gate.results.results_format import MetricResult, RunMetric


def _scores(runs: list[RunMetric]) -> list[float]:
    return [item.score for run in runs for item in run.per_invocation if item.score is not None]


def _scored_runs(metric: MetricResult) -> list[RunMetric]:
    return sorted((run for run in metric.runs if run is not None), key=lambda run: run.run)


# A case whose first round looks worse gets the extra round only while its own evidence is at most this: the
# chance of a first round at least this much worse, were nothing changed. A flaky case one run below its
# selection half (p ≈ 0.7) is left alone; a reliable case that failed one of two runs (p ≈ 0.29) is not.
UNDECIDED_P = 0.5


def undecided(selection: list[float], first: list[float]) -> bool:
    """The decider's rule (run/adaptive.py), shared with the power simulation (baseline/power_simulation.py): the
    first round looks worse than the selection half, by enough that it could be a drop (its exact one-sided
    p-value at most `UNDECIDED_P`). Extra runs go where they can decide the verdict: the per-case evidence test
    (evidence.py) weighs a case by its own p-value, so a case whose first round is ordinary noise could not add
    much evidence however many runs it got."""
    # identical scores averaged over different counts differ in the last bits (0.889 < 0.889): not "worse"
    if statistics.fmean(first) >= statistics.fmean(selection) - 1e-9:
        return False
    test = permutation_test(selection, first)
    return test is None or test.p_drop <= UNDECIDED_P


def baseline_halves(metric: MetricResult) -> tuple[list[float], list[float]]:
    """(selection half, test half): the first ⌊n/2⌋ runs and the rest. A baseline without per-run scores counts
    as one run, which has no selection half."""
    runs = _scored_runs(metric)
    if not runs:
        return [], [metric.score] if metric.score is not None else []
    cut = len(runs) // 2
    return _scores(runs[:cut]), _scores(runs[cut:])


def current_rounds(metric: MetricResult, first_round_runs: int) -> tuple[list[float], list[float]]:
    """(first round, extra round) scores of an adaptive run."""
    runs = _scored_runs(metric)
    return (
        _scores([r for r in runs if r.run < first_round_runs]),
        _scores([r for r in runs if r.run >= first_round_runs]),
    )


@dataclass
class StagedPair:
    """One case of an adaptive comparison: every sample, split by stage."""

    baseline: list[float]
    selection: list[float]  # baseline, first half
    test: list[float]  # baseline, second half
    first: list[float]  # current, first round
    extra: list[float]  # current, extra round

    def first_delta(self) -> float | None:
        """The first round against the whole baseline: unbiased, since every case has a first round whatever
        happened; the extra round is not, having gone only to cases that looked worse."""
        if not self.first or not self.baseline:
            return None
        return statistics.fmean(self.first) - statistics.fmean(self.baseline)

    def case_delta(self) -> float | None:
        """This case's change: from its extra runs against the test half when it has them (fresh samples, unbiased
        for the case), else from its first round."""
        if self.extra and self.test:
            return statistics.fmean(self.extra) - statistics.fmean(self.test)
        return self.first_delta()
