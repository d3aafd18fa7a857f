"""The smallest drop a design can confirm, computed by the gate's own tests, and the unconfirmed rule."""

from __future__ import annotations

import pytest

from adk_eval_gate.baseline.compare import compare
from adk_eval_gate.baseline.power import (
    Design,
    cases_touched,
    could_reject,
    is_unconfirmed,
    regressed,
    smallest_confirmable,
    smallest_significant,
    suggest_runs,
)
from adk_eval_gate.baseline.power_report import SetDesign, assess, family_size
from adk_eval_gate.baseline.power_simulation import simulated_power, size_runs
from adk_eval_gate.config.workflow_settings import GateSettings
from adk_eval_gate.results.results_format import ResultsFile
from tests.support.report_data import TRAJECTORY, Case, results_file

ALPHA, TOLERANCE = 0.01, 0.05


def design(cases: int, runs: int | tuple[int, int], family: int = 1, baseline: int | None = None) -> Design:
    first, most = runs if isinstance(runs, tuple) else (runs, runs)
    return Design(cases, baseline or most, first, most, ALPHA, TOLERANCE, family)


def test_the_issue_s_example_six_cases_one_run_can_never_fail():
    # six discordant cases, one run a side: p = 1/64 at best, and Holm doubles it for the two criteria
    assert smallest_confirmable(design(6, 1, family=2)) is None
    assert smallest_significant(design(6, 1, family=2)) is None
    # the cheapest adaptive range that confirms one broken case of six, and it does
    assert suggest_runs(design(6, 1, family=2)) == (2, 7)
    assert smallest_confirmable(design(6, (2, 7), family=2)) == 1
    assert smallest_confirmable(design(6, (2, 6), family=2)) != 1


def test_six_cases_two_to_ten_runs_confirm_one_case():
    assert smallest_confirmable(design(6, (2, 10), family=2)) == 1


def test_the_tolerance_and_the_statistics_are_separate_limits():
    # 50 cases, 5 runs: one broken case is significant, but 2 points is under the 5-point tolerance
    fifty = design(50, 5)
    assert smallest_significant(fifty) == 1
    assert smallest_confirmable(fifty) == 3  # 3 / 50 = 6 points >= 5
    assert not regressed(fifty, 2) and regressed(fifty, 3)


def test_the_answer_is_the_gate_s_own_verdict_on_such_results():
    """Results files with N broken cases, compared by `compare` itself: regressed exactly from the stated N."""
    for runs, cases in ((3, 10), (1, 12)):
        n = smallest_confirmable(design(cases, runs))
        assert n is not None
        for broken, expected in ((n - 1, False), (n, True)):
            summaries = compare(
                _results(cases, runs, broken), _results(cases, runs, 0), lambda _: TOLERANCE, ALPHA
            ).summaries
            assert (summaries[0].verdict == "regressed") is expected, (runs, cases, broken)


def test_only_tests_that_could_reject_count_in_the_family():
    assert not could_reject(design(1, 1))  # p = 0.5 at best: compare leaves it out (Tarone)
    assert could_reject(design(1, (2, 10)))
    ten_small = [SetDesign("a", f"s{i}", 1, ("t", "r"), 1, 1, 1) for i in range(10)]
    assert family_size(ten_small, GateSettings()) == 2  # the two pooled verdicts only
    (power,) = assess(ten_small, GateSettings())
    assert not power.weak and power.lines[-1].statement.startswith("all 10 eval sets: 10 cases × 1 run → confirms")
    assert all(line.confirms is None for line in power.lines[:-1])


def test_a_weak_agent_gets_a_computed_suggestion():
    (power,) = assess([SetDesign("dice", "dice", 6, ("t", "r"), 1, 1, 1)], GateSettings())
    assert power.weak and power.suggestion == "num_runs: {min: 2, max: 7}"
    assert power.lines[0].statement == "dice: 6 cases × 1 run → cannot confirm a drop of any size at alpha 0.01"


@pytest.mark.parametrize(
    ("drop", "cases", "significant", "unconfirmed"),
    [
        (0.5, 6, None, True),  # an unpowered design: whatever the drop
        (0.08, 6, 1, False),  # touches a case; a clean break of one would have been confirmed: noise
        (0.34, 6, 3, False),  # 2.04 cases' worth: at least 3 touched, a clean break of which it confirms
        (0.30, 6, 3, True),  # 1.8 cases' worth: at least 2 touched, below the 3 it can confirm
        (0.06, 50, 1, False),
    ],
)
def test_unconfirmed_means_the_design_could_not_have_confirmed_a_drop_that_size(drop, cases, significant, unconfirmed):
    assert is_unconfirmed(drop, cases, significant) is unconfirmed


def test_cases_touched_is_the_fewest_cases_a_drop_can_come_from():
    assert cases_touched(0.05, 50) == 3 and cases_touched(1 / 6, 6) == 1 and cases_touched(0.01, 6) == 1


def test_init_sizing_is_seeded_and_takes_the_cheapest_range_that_meets_the_target():
    first = size_runs(100, 2, ALPHA, TOLERANCE)
    assert first == size_runs(100, 2, ALPHA, TOLERANCE)
    assert first.enough and first.power >= 0.90 and (first.design.first_runs, first.design.max_runs) == (2, 10)
    share, _, simulated = simulated_power(Design(100, 6, 2, 6, ALPHA, TOLERANCE, 2), prs=150, seed="init", target=0.9)
    assert share - (0.25 / simulated) ** 0.5 < 0.90  # the cheaper range does not clear 90% by a standard error
    small = size_runs(6, 2, ALPHA, TOLERANCE)
    assert not small.enough and (small.design.first_runs, small.design.max_runs) == (2, 10)
    assert small.note().startswith("6 cases are too few for 90% power") and "confirms 1 broken case" in small.note()
    # the same agent: a false alarm is rare in the simulation too
    assert simulated_power(first.design, drop=0.0, prs=100)[0] <= 0.03


def _results(cases: int, runs: int, broken: int) -> ResultsFile:
    """One eval set whose first `broken` cases fail every run; the rest pass every run."""
    return results_file(
        {("a", "s"): [Case(f"c{i}", {TRAJECTORY: [[0.0 if i < broken else 1.0]] * runs}) for i in range(cases)]}
    )
