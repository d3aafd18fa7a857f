"""The tests behind the verdicts, against brute-force enumeration and textbook values."""

from __future__ import annotations

import itertools
import random
import statistics

import pytest

from adk_eval_gate.baseline.stats import (
    benjamini_hochberg,
    fisher_test,
    holm,
    permutation_test,
    stratified_test,
)


def brute_force(baseline, current):
    pooled = baseline + current
    observed = statistics.fmean(current) - statistics.fmean(baseline)
    deltas = []
    for chosen in itertools.combinations(range(len(pooled)), len(current)):
        cur = [pooled[i] for i in chosen]
        base = [pooled[i] for i in range(len(pooled)) if i not in chosen]
        deltas.append(statistics.fmean(cur) - statistics.fmean(base))
    return (sum(d <= observed + 1e-12 for d in deltas) / len(deltas), sum(d >= observed - 1e-12 for d in deltas) / len(deltas))


def test_fisher_matches_enumeration_and_the_textbook_value():
    assert fisher_test([1, 1, 1, 1, 1], [1, 0, 0, 0, 0]).p_drop == pytest.approx(6 / 252)
    rng = random.Random(3)
    for _ in range(200):
        base = [float(rng.random() < 0.7) for _ in range(rng.randint(1, 6))]
        cur = [float(rng.random() < 0.5) for _ in range(rng.randint(1, 6))]
        result = fisher_test(base, cur)
        assert (result.p_drop, result.p_rise) == pytest.approx(brute_force(base, cur))


def test_permutation_test_matches_enumeration_on_continuous_scores():
    rng = random.Random(4)
    for _ in range(100):
        base = [round(rng.random(), 2) for _ in range(rng.randint(2, 5))]
        cur = [round(rng.random(), 2) for _ in range(rng.randint(2, 5))]
        result = permutation_test(base, cur)
        assert result.method == "exact permutation"
        assert (result.p_drop, result.p_rise) == pytest.approx(brute_force(base, cur))


def test_one_sample_a_side_gives_no_test():
    assert permutation_test([1.0], [0.0]) is None


def test_large_samples_are_sampled_with_a_fixed_seed():
    base, cur = [0.5 + 0.01 * i for i in range(20)], [0.45 + 0.01 * i for i in range(20)]
    first, second = permutation_test(base, cur), permutation_test(base, cur)
    assert first.method == "sampled permutation" and first == second


def test_holm_and_bh_textbook_values():
    p = [0.01, 0.04, 0.03, 0.005]
    assert holm(p) == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert benjamini_hochberg(p) == pytest.approx([0.02, 0.04, 0.04, 0.02])


def test_stratified_test_ignores_cases_that_never_vary_and_is_calibrated():
    steady = [([1.0] * 5, [1.0] * 5)] * 40
    assert stratified_test(steady).p_drop == 1.0
    rng = random.Random(5)
    false_alarms = 0
    for _ in range(400):
        strata = []
        for _ in range(30):
            p = rng.random()
            strata.append(([float(rng.random() < p) for _ in range(3)], [float(rng.random() < p) for _ in range(3)]))
        false_alarms += stratified_test(strata).p_drop < 0.05
    assert false_alarms / 400 < 0.08  # nominal 5%
