"""pass^k: the chance that a case passes k runs in a row, the reliability figure of tau-bench (Yao et al. 2024,
arXiv 2406.12045), estimated from repeated runs (docs/pass-k.md).

A run of a case *passed* when every criterion of the case that has a threshold passed it in that run (its
`RunMetric.status`, ADK's own verdict on the run); it *failed* when any of them failed. A run in which no
criterion failed but one has no outcome (the agent errored, a judge was unavailable, a criterion was not
evaluated) has no outcome and is not counted — as `results.flakiness` counts runs — so that an outage is never
read as unreliability nor as success (the case's own status still fails the gate closed). A case none of whose
criteria has a threshold (agents-cli metrics without `thresholds:`) has no pass/fail and is left out.

For a case with n counted runs of which c passed, C(c, k) / C(n, k) is the unbiased estimator of p^k (p the
case's chance of passing a run): the share of the k-subsets of its runs that all passed. An eval set's pass^k is
the mean over its cases. k larger than a case's runs cannot be estimated: the eval set then has no estimate
(never a pass), and says which cases lacked runs.

The interval is a t-interval over cases: the per-case estimates are independent, each unbiased for its case's
p^k, so their sample variance over m cases estimates the variance of their mean (within-case sampling noise and
the spread of the cases together: cases viewed as drawn from a population of such cases, which is conservative
for the eval set's own cases). Clipped to [0, 1]. When every case gives the same estimate (every run of every
case passed, say) that variance is 0 and would claim certainty from m cases: the Wilson score interval for the
mean as m Bernoulli outcomes is given instead. One case has no spread to estimate: [0, 1].
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from adk_eval_gate.results.results_format import CaseResult, EvalSetResult

LEVEL = 0.95  # the interval's coverage
_T_975 = (  # Student t quantiles at 0.975 for 1..30 degrees of freedom; beyond, the normal's 1.96 is within 2%
    12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145, 2.131,
    2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042,
)  # fmt: skip
_Z = 1.959964

RunTally = tuple[int, int]  # (runs passed, runs with an outcome) of one case


def estimate(passed: int, runs: int, k: int) -> float | None:
    """C(passed, k) / C(runs, k); None when the case has fewer than k runs (it cannot be estimated)."""
    if k < 1 or passed < 0 or passed > runs:
        raise ValueError(f"pass^k needs k >= 1 and 0 <= passed <= runs, not k={k}, {passed}/{runs}")
    if runs < k:
        return None
    return math.comb(passed, k) / math.comb(runs, k)


def _gated(eval_set: EvalSetResult, name: str) -> bool:
    """A criterion with a threshold: every ADK criterion, an agents-cli metric only when `thresholds:` names it."""
    config = eval_set.criteria.get(name)
    return config is not None and config.options.get("has_threshold") is not False


def run_tally(eval_set: EvalSetResult, case: CaseResult, first_runs: int | None = None) -> RunTally | None:
    """(runs passed, runs with an outcome) of a case; None when no criterion of it has a threshold. `first_runs`:
    only runs numbered below it (an adaptive run's first round)."""
    names = [name for name in case.metrics if _gated(eval_set, name)]
    if not names:
        return None
    statuses: dict[int, list[str]] = {}
    for name in names:
        for position, run in enumerate(case.metrics[name].runs):
            number = run.run if run is not None else position
            statuses.setdefault(number, []).append(run.status if run is not None else "error")
    passed = counted = 0
    for number, seen in statuses.items():
        if first_runs is not None and number >= first_runs:
            continue
        if "failed" in seen:
            counted += 1
        elif len(seen) == len(names) and all(s == "passed" for s in seen):
            counted += 1
            passed += 1
    return passed, counted


def tallies(eval_set: EvalSetResult, first_round: bool = False) -> dict[str, RunTally]:
    """Per case with a threshold, its tally (`first_round`: of the first round of adaptive runs only)."""
    found = {}
    for case in eval_set.cases:
        if case.status == "not_run":
            continue
        first = case.sampling.first_round_runs if first_round and case.sampling is not None else None
        if (tally := run_tally(eval_set, case, first)) is not None:
            found[case.eval_id] = tally
    return found


@dataclass(frozen=True)
class SetEstimate:
    """An eval set's pass^k: `value` and its interval (`bounds`), or None with the cases that lacked runs."""

    k: int
    value: float | None
    bounds: tuple[float, float] | None
    cases: int  # cases with a threshold
    short: tuple[str, ...] = ()  # cases with fewer than k counted runs


def t_quantile(df: int) -> float:
    return _T_975[df - 1] if df <= len(_T_975) else _Z


def wilson(mean: float, m: int) -> tuple[float, float]:
    """The Wilson score interval for a proportion `mean` of m outcomes."""
    z2 = _Z * _Z
    centre = (mean + z2 / (2 * m)) / (1 + z2 / m)
    half = _Z * math.sqrt(mean * (1 - mean) / m + z2 / (4 * m * m)) / (1 + z2 / m)
    return max(0.0, centre - half), min(1.0, centre + half)


def interval(estimates: Sequence[float]) -> tuple[float, float]:
    """The 95% interval of the mean of per-case estimates (module docstring)."""
    m = len(estimates)
    mean = statistics.fmean(estimates)
    if m < 2:
        return 0.0, 1.0
    spread = statistics.stdev(estimates)
    if spread == 0:
        return wilson(mean, m)
    half = t_quantile(m - 1) * spread / math.sqrt(m)
    return max(0.0, mean - half), min(1.0, mean + half)


def set_estimate(counts: dict[str, RunTally], k: int) -> SetEstimate:
    """An eval set's pass^k over its cases' tallies; no estimate when a case has fewer than k runs, or none has
    a threshold."""
    short = tuple(sorted(eid for eid, (_, runs) in counts.items() if runs < k))
    if short or not counts:
        return SetEstimate(k, None, None, len(counts), short)
    values = [estimate(passed, runs, k) or 0.0 for passed, runs in counts.values()]
    return SetEstimate(k, statistics.fmean(values), interval(values), len(counts))


def case_line(tally: RunTally, k: int) -> str:
    """`0.43 (5/7 runs)`, or why it has none: for the page and the console."""
    passed, runs = tally
    value = estimate(passed, runs, k)
    shown = f"{value:.2f}" if value is not None else f"cannot be estimated (k={k} > {runs} run(s))"
    return f"{shown} ({passed}/{runs} runs passed)"
