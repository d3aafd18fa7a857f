"""Tests that tell a real change from LLM noise.

* One case: an exact permutation test of the difference in mean score between the baseline's samples and the
  current ones (every run × invocation). On 0/1 scores this is Fisher's exact test, computed in closed form from
  the hypergeometric distribution; on ROUGE or rubric means it is the two-sample permutation test, enumerated
  exactly up to 5,000 splits and sampled (seeded) beyond.
* An eval set, or every eval set of an agent pooled: a stratified permutation test over cases (labels shuffled
  only within a case), whose statistic is the sum of the per-case mean differences. Cases that always pass or
  always fail add no noise — the same idea as the Cochran–Mantel–Haenszel test, extended to continuous scores.
  Its null distribution is the convolution of each case's own permutation distribution, computed exactly while
  that stays small (always, on 0/1 scores); otherwise sampled (seeded) when few cases vary, and approximated
  by the normal only when many do. The normal alone is anti-conservative with few tiny strata: ten one-sample
  cases that all drop have p = 2⁻¹⁰ ≈ 0.00098 exactly, 0.00079 under the normal; five give 0.031 against 0.013.
* Many comparisons in one run: Holm's step-down for the verdicts that gate the merge (family-wise error),
  Benjamini–Hochberg for the per-case rows (false discovery rate). Each test also reports the smallest p-value
  it could have produced given its samples, so a test that could never be significant (one case, one run a
  side: 0.5) need not dilute the gating family.
"""

from __future__ import annotations

import itertools
import math
import random
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

EXACT_LIMIT = 5_000
SAMPLED_PERMUTATIONS = 4_000
# The exact stratified distribution is given up when its support or the work to build it grows past these.
EXACT_SUPPORT_LIMIT = 20_000
EXACT_WORK_LIMIT = 1_000_000
# With this many varying cases the normal approximation's tails are close enough; below it, sample instead.
NORMAL_MIN_STRATA = 30
SAMPLED_STRATIFIED = 20_000
_KEY = 1e9  # statistic values are merged on this grid, far finer than any score difference that matters


@dataclass(frozen=True)
class TestResult:
    delta: float  # current − baseline, in score units
    p_drop: float  # one-sided p-value for "current is lower"
    p_rise: float  # one-sided p-value for "current is higher"
    method: str
    # the smallest p-values this test could give with these samples, whatever the labels: 0.0 when not computed
    min_p_drop: float = 0.0
    min_p_rise: float = 0.0
    # adaptive runs: the change the extra round measures (strata.extra_round_drop), which the size check may count
    # when the first round's noisier estimate falls short of the tolerance; None otherwise
    extra_delta: float | None = None


def _mean(values: Sequence[float]) -> float:
    return math.fsum(values) / len(values)


def permutation_test(baseline: Sequence[float], current: Sequence[float], seed: int = 0) -> TestResult | None:
    """None when either side has a single sample: nothing can be told from noise then."""
    if len(baseline) < 2 and len(current) < 2:
        return None
    pooled = list(baseline) + list(current)
    n1 = len(current)
    if all(v in (0.0, 1.0) for v in pooled):
        return fisher_test(baseline, current)
    total = math.fsum(pooled)
    observed = _mean(current) - _mean(baseline)
    eps = 1e-12 * max(1.0, abs(total))

    def delta_for(current_sum: float) -> float:
        return current_sum / n1 - (total - current_sum) / len(baseline)

    splits = math.comb(len(pooled), n1)
    at_most = at_least = 0
    if splits <= EXACT_LIMIT:
        for chosen in itertools.combinations(pooled, n1):
            d = delta_for(math.fsum(chosen))
            at_most += d <= observed + eps
            at_least += d >= observed - eps
        count, method = splits, "exact permutation"
    else:
        rng = random.Random(seed)
        for _ in range(SAMPLED_PERMUTATIONS):
            d = delta_for(math.fsum(rng.sample(pooled, n1)))
            at_most += d <= observed + eps
            at_least += d >= observed - eps
        # the observed split counts as one permutation, which keeps sampled p-values valid
        count, at_most, at_least, method = SAMPLED_PERMUTATIONS + 1, at_most + 1, at_least + 1, "sampled permutation"
    return TestResult(observed, at_most / count, at_least / count, method)


def fisher_test(baseline: Sequence[float], current: Sequence[float]) -> TestResult:
    n0, n1 = len(baseline), len(current)
    k1, total = int(sum(current)), int(sum(baseline)) + int(sum(current))
    n = n0 + n1
    denominator = math.comb(n, n1)
    low, high = max(0, total - n0), min(total, n1)
    pmf = {k: math.comb(total, k) * math.comb(n - total, n1 - k) / denominator for k in range(low, high + 1)}
    p_drop = min(1.0, math.fsum(p for k, p in pmf.items() if k <= k1))
    p_rise = min(1.0, math.fsum(p for k, p in pmf.items() if k >= k1))
    return TestResult(_mean(current) - _mean(baseline), p_drop, p_rise, "Fisher exact")


def _normal_cdf(z: float) -> float:
    return 0.5 * math.erfc(-z / math.sqrt(2))


def _key(current_sum: float, total: float, n0: int, n1: int) -> int:
    """A case's mean difference when its current side sums to `current_sum`, on the `_KEY` grid."""
    return round((current_sum / n1 - (total - current_sum) / n0) * _KEY)


def _stratum_distribution(baseline: Sequence[float], current: Sequence[float]) -> dict[int, float] | None:
    """The permutation distribution of one case's mean difference, on the `_KEY` grid; None when too large."""
    n0, n1 = len(baseline), len(current)
    pooled = list(baseline) + list(current)
    n = n0 + n1
    total = math.fsum(pooled)

    def key(current_sum: float) -> int:
        return _key(current_sum, total, n0, n1)

    if all(v in (0.0, 1.0) for v in pooled):  # hypergeometric: the count of ones the current side draws
        ones = int(total)
        denominator = math.comb(n, n1)
        return {
            key(float(k)): math.comb(ones, k) * math.comb(n - ones, n1 - k) / denominator
            for k in range(max(0, ones - n0), min(ones, n1) + 1)
        }
    splits = math.comb(n, n1)
    if splits > EXACT_LIMIT:
        return None
    counts: dict[int, int] = {}
    for chosen in itertools.combinations(pooled, n1):
        k = key(math.fsum(chosen))
        counts[k] = counts.get(k, 0) + 1
    return {k: c / splits for k, c in counts.items()}


def case_distribution(baseline: Sequence[float], current: Sequence[float]) -> dict[int, float] | None:
    """One case's permutation distribution of its mean difference (keys on the `case_key` grid); None when too
    large to enumerate. The per-case evidence test (`evidence.py`) scores each of its points."""
    return _stratum_distribution(baseline, current)


def case_key(baseline: Sequence[float], current: Sequence[float]) -> int:
    """The observed mean difference of one case on the grid `case_distribution` is keyed on."""
    return _key(math.fsum(current), math.fsum(baseline) + math.fsum(current), len(baseline), len(current))


def _convolve(distributions: Sequence[dict[int, float]]) -> dict[int, float] | None:
    total: dict[int, float] = {0: 1.0}
    work = 0
    for dist in sorted(distributions, key=len):
        work += len(total) * len(dist)
        if work > EXACT_WORK_LIMIT:
            return None
        merged: dict[int, float] = {}
        for a, pa in total.items():
            for b, pb in dist.items():
                merged[a + b] = merged.get(a + b, 0.0) + pa * pb
        if len(merged) > EXACT_SUPPORT_LIMIT:
            return None
        total = merged
    return total


def _sampled_stratified(
    strata: Sequence[tuple[Sequence[float], Sequence[float]]],
    distributions: Sequence[dict[int, float] | None],
    observed_key: int,
    slack: int,
    seed: int,
) -> tuple[float, float]:
    """Relabellings drawn within each case: from its exact distribution when known, else by shuffling its samples."""
    rng = random.Random(seed)
    columns: list[list[int]] = []
    for (baseline, current), dist in zip(strata, distributions, strict=True):
        if dist is not None:
            keys = list(dist)
            columns.append(
                rng.choices(keys, cum_weights=list(itertools.accumulate(dist[k] for k in keys)), k=SAMPLED_STRATIFIED)
            )
            continue
        pooled, n0, n1 = [*baseline, *current], len(baseline), len(current)
        total = math.fsum(pooled)
        columns.append([_key(math.fsum(rng.sample(pooled, n1)), total, n0, n1) for _ in range(SAMPLED_STRATIFIED)])
    totals = [sum(draw) for draw in zip(*columns, strict=True)]
    # the observed labelling counts as one permutation, which keeps sampled p-values valid
    at_most = 1 + sum(t <= observed_key + slack for t in totals)
    at_least = 1 + sum(t >= observed_key - slack for t in totals)
    return at_most / (SAMPLED_STRATIFIED + 1), at_least / (SAMPLED_STRATIFIED + 1)


def stratified_test(strata: Sequence[tuple[Sequence[float], Sequence[float]]], seed: int = 0) -> TestResult | None:
    """`strata` holds one (baseline samples, current samples) pair per case present on both sides."""
    if not strata:
        return None
    deltas = [_mean(c) - _mean(b) for b, c in strata]
    delta = _mean(deltas)
    varying = [(b, c) for b, c in strata if len(set(b) | set(c)) > 1]
    if not varying:
        # every case gave identical samples on both sides of every permutation: no evidence of any change
        return TestResult(delta, 1.0, 1.0, "exact stratified permutation", 1.0, 1.0)
    # the observed statistic and every relabelling are sums of per-case values rounded the same way
    observed_key = sum(_key(math.fsum(c), math.fsum(b) + math.fsum(c), len(b), len(c)) for b, c in varying)
    slack = len(varying)
    binary = all(v in (0.0, 1.0) for b, c in varying for v in (*b, *c))
    # many cases of continuous scores would outgrow the exact limits anyway: do not spend the enumeration on them
    if binary or len(varying) < NORMAL_MIN_STRATA:
        distributions = [_stratum_distribution(b, c) for b, c in varying]
        known = [d for d in distributions if d is not None]
        exact = _convolve(known) if len(known) == len(distributions) else None
        if exact is not None:
            p_drop = math.fsum(p for k, p in exact.items() if k <= observed_key + slack)
            p_rise = math.fsum(p for k, p in exact.items() if k >= observed_key - slack)
            return TestResult(
                delta,
                min(1.0, p_drop),
                min(1.0, p_rise),
                "exact stratified permutation",
                exact[min(exact)],
                exact[max(exact)],
            )
        if len(varying) < NORMAL_MIN_STRATA:
            p_drop, p_rise = _sampled_stratified(varying, distributions, observed_key, slack, seed)
            floor = 1 / (SAMPLED_STRATIFIED + 1)
            return TestResult(delta, p_drop, p_rise, "sampled stratified permutation", floor, floor)
    statistic = math.fsum(_mean(c) - _mean(b) for b, c in varying)
    variance = 0.0
    for baseline, current in varying:
        n0, n1 = len(baseline), len(current)
        n = n0 + n1
        variance += n * n * statistics.pvariance(list(baseline) + list(current)) / (n0 * n1 * (n - 1))
    z = statistic / math.sqrt(variance)
    return TestResult(delta, _normal_cdf(z), _normal_cdf(-z), "stratified permutation, normal approximation")


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm's step-down adjusted p-values (family-wise error control)."""
    order = sorted(range(len(p_values)), key=lambda i: p_values[i])
    adjusted = [1.0] * len(p_values)
    running = 0.0
    m = len(p_values)
    for rank, index in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p_values[index]))
        adjusted[index] = running
    return adjusted


def benjamini_hochberg(p_values: Sequence[float]) -> list[float]:
    """Benjamini–Hochberg adjusted p-values (false discovery rate control)."""
    m = len(p_values)
    order = sorted(range(m), key=lambda i: p_values[i], reverse=True)
    adjusted = [1.0] * m
    running = 1.0
    for position, index in enumerate(order):
        rank = m - position
        running = min(running, p_values[index] * m / rank)
        adjusted[index] = min(1.0, running)
    return adjusted


def _z(p: float) -> float:
    if p >= 1.0:
        return -math.inf
    return statistics.NormalDist().inv_cdf(1.0 - max(p, 1e-15))


def _combined(p_first: float, p_second: float) -> float:
    z = (_z(p_first) + _z(p_second)) / math.sqrt(2)
    return 1.0 if z == -math.inf else _normal_cdf(-z)


def combine_stages(first: TestResult | None, second: TestResult | None, delta: float) -> TestResult | None:
    """Adaptive runs' two-stage test: the first round against one half of the baseline's runs, the extra round
    against the other half, joined by the inverse normal method with equal weights fixed in advance.

    Which cases got extra runs depended on the first round; the second stage's test stays exact because its
    samples (fresh runs, the other baseline half) played no part in that choice, and that is all the combination
    needs to keep its level (Bauer & Köhne 1994; Lehmacher & Wassmer 1999). A first stage that cannot exist by
    design (a one-run baseline has no selection half) leaves the second alone; a second stage with no case in it
    (nothing looked worse than the baseline) counts as p = 1: no evidence of a change.
    """
    if first is None:
        return (
            None
            if second is None
            else TestResult(
                delta,
                second.p_drop,
                second.p_rise,
                f"extra runs only: {second.method}",
                second.min_p_drop,
                second.min_p_rise,
            )
        )
    if second is None:
        second = TestResult(0.0, 1.0, 1.0, "no extra runs", 1.0, 1.0)
    return TestResult(
        delta,
        _combined(first.p_drop, second.p_drop),
        _combined(first.p_rise, second.p_rise),
        "two-stage adaptive, inverse normal of "
        + (f"two {first.method} tests" if first.method == second.method else f"{first.method} and {second.method}"),
        _combined(first.min_p_drop, second.min_p_drop),
        _combined(first.min_p_rise, second.min_p_rise),
    )


def sign_flip_test(differences: Sequence[float], seed: int = 0) -> TestResult | None:
    """Paired differences (current − old, one per case), tested by flipping their signs: under no change each case's
    difference is as likely negative as positive. For a side of which only a mean per case is kept (the history's
    record of a metric on its own scale), this compares means without assuming a scale or a distribution."""
    if not differences:
        return None
    delta = _mean(differences)
    moving = [abs(d) for d in differences if d != 0]
    if not moving:
        return TestResult(delta, 1.0, 1.0, "exact paired sign-flip", 1.0, 1.0)
    observed = math.fsum(differences)
    eps = 1e-12 * max(1.0, math.fsum(moving))
    if 2 ** len(moving) <= EXACT_LIMIT:
        sums = [
            math.fsum(s * v for s, v in zip(signs, moving, strict=True))
            for signs in itertools.product((1, -1), repeat=len(moving))
        ]
        count, method = len(sums), "exact paired sign-flip"
        at_most, at_least = sum(t <= observed + eps for t in sums), sum(t >= observed - eps for t in sums)
        low, high = min(sums), max(sums)
        floors = sum(t <= low + eps for t in sums) / count, sum(t >= high - eps for t in sums) / count
        return TestResult(delta, at_most / count, at_least / count, method, *floors)
    rng = random.Random(seed)
    at_most = at_least = 1  # the observed signs count as one flip, which keeps sampled p-values valid
    for _ in range(SAMPLED_PERMUTATIONS):
        t = math.fsum(v if rng.random() < 0.5 else -v for v in moving)
        at_most += t <= observed + eps
        at_least += t >= observed - eps
    floor = 1 / (SAMPLED_PERMUTATIONS + 1)
    count = SAMPLED_PERMUTATIONS + 1
    return TestResult(delta, at_most / count, at_least / count, "sampled paired sign-flip", floor, floor)
