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
    return (
        sum(d <= observed + 1e-12 for d in deltas) / len(deltas),
        sum(d >= observed - 1e-12 for d in deltas) / len(deltas),
    )


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


def stratified_brute_force(strata):
    """Every within-case relabelling of every case, enumerated: the exact null distribution."""
    observed = sum(statistics.fmean(c) - statistics.fmean(b) for b, c in strata)
    per_case = []
    for b, c in strata:
        pooled = list(b) + list(c)
        per_case.append(
            [
                statistics.fmean([pooled[i] for i in chosen])
                - statistics.fmean([pooled[i] for i in range(len(pooled)) if i not in chosen])
                for chosen in itertools.combinations(range(len(pooled)), len(c))
            ]
        )
    totals = [sum(combo) for combo in itertools.product(*per_case)]
    return (
        sum(t <= observed + 1e-9 for t in totals) / len(totals),
        sum(t >= observed - 1e-9 for t in totals) / len(totals),
    )


def test_small_stratified_tests_are_exact_against_enumeration():
    rng = random.Random(6)
    for _ in range(150):
        strata = []
        for _ in range(rng.randint(1, 4)):
            n0, n1 = rng.randint(1, 3), rng.randint(1, 3)
            if rng.random() < 0.5:
                strata.append(
                    ([float(rng.random() < 0.6) for _ in range(n0)], [float(rng.random() < 0.4) for _ in range(n1)])
                )
            else:
                strata.append(
                    ([round(rng.random(), 2) for _ in range(n0)], [round(rng.random(), 2) for _ in range(n1)])
                )
        result = stratified_test(strata)
        if any(len(set(b) | set(c)) > 1 for b, c in strata):
            assert result.method == "exact stratified permutation"
        assert (result.p_drop, result.p_rise) == pytest.approx(stratified_brute_force(strata))


def test_ten_one_sample_cases_that_all_dropped_have_the_exact_sign_flip_p_value():
    result = stratified_test([([1.0], [0.0])] * 10)
    assert result.p_drop == pytest.approx(2**-10) and result.min_p_drop == pytest.approx(2**-10)
    # the normal approximation would claim more than the data hold: 0.00079 < 0.00098
    assert statistics.NormalDist().cdf(-10 / 10**0.5) < result.p_drop
    one = stratified_test([([1.0], [0.0])])
    assert one.p_drop == 0.5 and one.min_p_drop == 0.5  # one case, one sample a side: never significant alone


@pytest.mark.parametrize("cases, runs", [(1, 1), (3, 1), (5, 1), (10, 1), (3, 3), (10, 3), (3, 5)])
def test_tiny_strata_are_calibrated_at_every_level(cases, runs):
    """Under no change, P(p ≤ level) ≤ level for every level: not hoped, counted over many simulated runs."""
    rng = random.Random(cases * 100 + runs)
    p_values = []
    for _ in range(2000):
        strata = []
        for _ in range(cases):
            rate = rng.choice([0.1, 0.5, 0.9, 0.97])
            strata.append(
                ([float(rng.random() < rate) for _ in range(runs)], [float(rng.random() < rate) for _ in range(runs)])
            )
        p_values.append(stratified_test(strata).p_drop)
    for level in (0.001, 0.01, 0.05, 0.2):
        rate = sum(p <= level for p in p_values) / len(p_values)
        assert rate <= level + 3 * (level * (1 - level) / len(p_values)) ** 0.5 + 1e-12, (level, rate)


def test_continuous_scores_beyond_exact_are_sampled_with_a_seed_and_many_are_normal():
    rng = random.Random(8)
    few = [([round(rng.random(), 3) for _ in range(5)], [round(rng.random(), 3) for _ in range(5)]) for _ in range(8)]
    first, second = stratified_test(few), stratified_test(few)
    assert first.method == "sampled stratified permutation" and first == second
    assert 0 < first.min_p_drop <= 1e-4  # the smallest p a sampled test can give stays far below any alpha
    many = [([round(rng.random(), 3) for _ in range(5)], [round(rng.random(), 3) for _ in range(5)]) for _ in range(40)]
    assert stratified_test(many).method == "stratified permutation, normal approximation"


def test_the_sampled_stratified_test_agrees_with_the_exact_one(monkeypatch):
    from adk_eval_gate.baseline import stats

    rng = random.Random(9)
    strata = [
        ([round(rng.random(), 2) for _ in range(3)], [round(rng.random() * 0.8, 2) for _ in range(3)]) for _ in range(4)
    ]
    exact = stratified_test(strata)
    monkeypatch.setattr(stats, "EXACT_SUPPORT_LIMIT", 10)  # too small for the exact distribution: sampled instead
    sampled = stratified_test(strata)
    assert exact.method.startswith("exact") and sampled.method.startswith("sampled")
    for p, q in ((exact.p_drop, sampled.p_drop), (exact.p_rise, sampled.p_rise)):
        assert abs(p - q) <= 4 * (p * (1 - p) / stats.SAMPLED_STRATIFIED) ** 0.5 + 2 / stats.SAMPLED_STRATIFIED
