"""pass^k (issue 36.4): the unbiased estimator against enumeration over k-subsets, the interval's coverage on
simulated eval sets, and the permutation test's size and power."""

from __future__ import annotations

import itertools
import math
import random

import pytest

from adk_eval_gate.baseline.pass_k import estimate, interval, set_estimate
from adk_eval_gate.baseline.pass_k_compare import pass_k_test


def brute_force(outcomes: list[bool], k: int) -> float:
    subsets = list(itertools.combinations(outcomes, k))
    return sum(all(s) for s in subsets) / len(subsets)


@pytest.mark.parametrize("runs", range(1, 9))
def test_the_estimator_is_the_share_of_k_subsets_that_all_passed(runs):
    for passed in range(runs + 1):
        outcomes = [True] * passed + [False] * (runs - passed)
        for k in range(1, runs + 1):
            assert estimate(passed, runs, k) == pytest.approx(brute_force(outcomes, k), abs=1e-12)


def test_the_estimator_is_unbiased_for_p_to_the_k():
    # E[C(C,k)/C(n,k)] with C ~ Binomial(n, p) is exactly p^k
    for n, k, p in [(5, 2, 0.3), (8, 4, 0.9), (10, 10, 0.7), (6, 1, 0.5)]:
        expected = sum(math.comb(n, c) * p**c * (1 - p) ** (n - c) * (estimate(c, n, k) or 0.0) for c in range(n + 1))
        assert expected == pytest.approx(p**k, rel=1e-12)


def test_k_larger_than_the_runs_cannot_be_estimated():
    assert estimate(3, 3, 4) is None
    result = set_estimate({"a": (3, 3), "b": (5, 5)}, 4)
    assert result.value is None and result.short == ("a",)
    with pytest.raises(ValueError):
        estimate(4, 3, 2)


def test_the_eval_set_is_the_mean_over_cases():
    result = set_estimate({"a": (4, 4), "b": (2, 4), "c": (0, 4)}, 2)
    assert result.value == pytest.approx((1 + 1 / 6 + 0) / 3)
    assert result.bounds is not None and result.bounds[0] <= result.value <= result.bounds[1]


def test_every_case_alike_still_gives_an_interval_not_a_point():
    low, high = interval([1.0] * 30)
    assert high == 1.0 and 0.85 < low < 0.95


def _beta_moment(a: float, b: float, k: int) -> float:
    """E[p^k] for p ~ Beta(a, b)."""
    return math.prod((a + i) / (a + b + i) for i in range(k))


@pytest.mark.parametrize(("a", "b", "cases", "runs", "k"), [(2.0, 0.6, 30, 8, 4), (1.0, 1.0, 20, 5, 2)])
def test_the_interval_covers_the_population_pass_k_about_95_percent_of_the_time(a, b, cases, runs, k):
    rng = random.Random(7)
    truth = _beta_moment(a, b, k)
    covered, trials = 0, 600
    for _ in range(trials):
        values = []
        for _ in range(cases):
            p = rng.betavariate(a, b)
            passed = sum(rng.random() < p for _ in range(runs))
            values.append(estimate(passed, runs, k) or 0.0)
        low, high = interval(values)
        covered += low <= truth <= high
    assert 0.92 <= covered / trials <= 0.985, covered / trials


def _simulate(rng: random.Random, probabilities: list[float], runs: int) -> list[tuple[int, int]]:
    return [(sum(rng.random() < p for _ in range(runs)), runs) for p in probabilities]


def test_the_test_holds_its_size_on_unchanged_agents():
    rng = random.Random(3)
    probabilities = [1.0] * 5 + [0.0] * 3 + [rng.uniform(0.3, 0.95) for _ in range(22)]
    false_alarms, trials = 0, 300
    for _ in range(trials):
        old, new = _simulate(rng, probabilities, 6), _simulate(rng, probabilities, 6)
        test = pass_k_test(list(zip(old, new, strict=True)), 3)
        assert test is not None
        false_alarms += test.p_drop < 0.05
    assert false_alarms / trials <= 0.07


def test_the_test_sees_reliable_cases_turned_unreliable():
    rng = random.Random(5)
    before = [0.97] * 20 + [0.5] * 10
    after = [0.6] * 10 + [0.97] * 10 + [0.5] * 10
    detected = 0
    for _ in range(50):
        strata = list(zip(_simulate(rng, before, 6), _simulate(rng, after, 6), strict=True))
        test = pass_k_test(strata, 4)
        assert test is not None and test.delta < 0
        detected += test.p_drop < 0.01
    assert detected >= 45


def test_k_of_one_is_the_exact_stratified_test_and_identical_cases_say_nothing():
    one = pass_k_test([((3, 4), (0, 4)), ((4, 4), (1, 4))], 1)
    assert one is not None and one.method == "exact stratified permutation" and one.p_drop < 0.05
    same = pass_k_test([((4, 4), (4, 4)), ((0, 4), (0, 4))], 2)
    assert same is not None and same.p_drop == 1.0 and same.delta == 0.0


def test_a_run_passes_only_when_every_criterion_with_a_threshold_passed_it():
    from adk_eval_gate.baseline.pass_k import tallies
    from tests.support.report_data import RESPONSE, TRAJECTORY, Case, results_file

    results = results_file(
        {
            ("a", "s"): [
                # run 0 both pass; run 1 the response fails; run 2 the agent errored; run 3 both pass
                Case("mixed", {TRAJECTORY: [[1.0], [1.0], None, [1.0]], RESPONSE: [[1.0], [0.0], None, [1.0]]}),
                Case("steady", {TRAJECTORY: [[1.0]] * 4, RESPONSE: [[1.0]] * 4}),
            ]
        }
    )
    (eval_set,) = results.eval_sets
    assert tallies(eval_set) == {"mixed": (2, 3), "steady": (4, 4)}  # the errored run has no outcome
    # an agents-cli metric without `thresholds:` passes everything: it says nothing of a run, and a case with only
    # such metrics is left out
    loose = {n: c.model_copy(update={"options": {"has_threshold": False}}) for n, c in eval_set.criteria.items()}
    assert tallies(eval_set.model_copy(update={"criteria": loose})) == {}
    only_trajectory = {**loose, TRAJECTORY: eval_set.criteria[TRAJECTORY]}
    assert tallies(eval_set.model_copy(update={"criteria": only_trajectory})) == {"mixed": (3, 3), "steady": (4, 4)}


def test_an_eval_set_without_a_threshold_on_either_side_has_no_pass_k_row():
    from adk_eval_gate.baseline.pass_k_compare import pass_k_rows
    from tests.support.report_data import TRAJECTORY, Case, results_file

    results = results_file({("a", "s"): [Case("q", {TRAJECTORY: [[1.0]] * 3})]})
    (eval_set,) = results.eval_sets
    loose = {n: c.model_copy(update={"options": {"has_threshold": False}}) for n, c in eval_set.criteria.items()}
    unthresholded = results.model_copy(update={"eval_sets": [eval_set.model_copy(update={"criteria": loose})]})
    assert pass_k_rows(unthresholded, unthresholded, 2, 0.05, 0.01) == []
    (row,) = pass_k_rows(results, results, 2, 0.05, 0.01)
    assert row.verdict == "unchanged" and row.baseline == row.current == 1.0
