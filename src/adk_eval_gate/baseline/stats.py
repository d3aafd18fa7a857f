"""Tests that tell a real change from LLM noise.

* One case: an exact permutation test of the difference in mean score between the baseline's samples and the
  current ones (every run × invocation). On 0/1 scores this is Fisher's exact test, computed in closed form from
  the hypergeometric distribution; on ROUGE or rubric means it is the two-sample permutation test, enumerated
  exactly up to 5,000 splits and sampled (seeded) beyond.
* An eval set: a stratified permutation test over cases (labels shuffled only within a case), in its normal
  form. Each case contributes its own permutation variance, so cases that always pass or always fail add no
  noise — the same idea as the Cochran–Mantel–Haenszel test, extended to continuous scores.
* Many comparisons in one run: Holm's step-down for the eval-set verdicts that gate the merge (family-wise
  error), Benjamini–Hochberg for the per-case rows (false discovery rate).
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


@dataclass(frozen=True)
class TestResult:
    delta: float  # current − baseline, in score units
    p_drop: float  # one-sided p-value for "current is lower"
    p_rise: float  # one-sided p-value for "current is higher"
    method: str


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


def stratified_test(strata: Sequence[tuple[Sequence[float], Sequence[float]]]) -> TestResult | None:
    """`strata` holds one (baseline samples, current samples) pair per case present on both sides."""
    if not strata:
        return None
    statistic = variance = 0.0
    deltas = []
    for baseline, current in strata:
        n0, n1 = len(baseline), len(current)
        pooled = list(baseline) + list(current)
        n = n0 + n1
        d = _mean(current) - _mean(baseline)
        deltas.append(d)
        statistic += d
        spread = statistics.pvariance(pooled) if n > 1 else 0.0
        variance += n * n * spread / (n0 * n1 * (n - 1)) if n > 1 else 0.0
    delta = _mean(deltas)
    if variance <= 1e-15:
        # every case gave identical samples on both sides of every permutation: no evidence of any change
        flat = 1.0 if abs(statistic) < 1e-12 else 0.0
        return TestResult(delta, 1.0 if statistic >= 0 else flat, 1.0 if statistic <= 0 else flat, "stratified permutation")
    z = statistic / math.sqrt(variance)
    return TestResult(delta, _normal_cdf(z), _normal_cdf(-z), "stratified permutation (normal)")


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
