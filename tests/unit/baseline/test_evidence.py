"""The per-case evidence test (baseline/evidence.py): exact on enumerable cases, what it weighs, and the extra-run
allocation and size check that go with it."""

from __future__ import annotations

import itertools
import math
from collections import Counter

from adk_eval_gate.baseline.compare import decide_gating, verdict_for
from adk_eval_gate.baseline.comparison_format import Summary
from adk_eval_gate.baseline.evidence import evidence_test
from adk_eval_gate.baseline.stages import StagedPair, undecided
from adk_eval_gate.baseline.stats import TestResult as Result
from adk_eval_gate.baseline.stats import stratified_test
from adk_eval_gate.baseline.strata import Strata, extra_round_drop, group_test


def _relabellings(pooled: list[float], n0: int) -> list[tuple[list[float], list[float]]]:
    """Every split of one case's pooled samples into baseline (n0) and current, each equally likely under no change."""
    out = []
    for chosen in itertools.combinations(range(len(pooled)), n0):
        rest = [i for i in range(len(pooled)) if i not in chosen]
        out.append(([pooled[i] for i in chosen], [pooled[i] for i in rest]))
    return out


def _null_p_values(cases: list[tuple[list[float], int]]) -> Counter[float]:
    """The test's p_drop over every joint relabelling, counted (each relabelling equally likely)."""
    counts: Counter[float] = Counter()
    for strata in itertools.product(*(_relabellings(pooled, n0) for pooled, n0 in cases)):
        result = evidence_test(list(strata))
        assert result is not None
        counts[round(result.p_drop, 12)] += 1
    return counts


def test_the_false_alarm_rate_is_exactly_the_p_value_at_every_attainable_level():
    # a reliable case, a flaky one, an always-passing one (no variation) and a rubric-scored one
    cases = [([1.0, 1.0, 1.0, 1.0, 0.0], 3), ([1.0, 0.0, 1.0, 0.0], 2), ([1.0, 1.0, 1.0], 2), ([0.2, 0.5, 0.9, 0.4], 2)]
    counts = _null_p_values(cases)
    total = sum(counts.values())
    assert total == math.comb(5, 3) * math.comb(4, 2) * math.comb(3, 2) * math.comb(4, 2)
    for level in counts:
        rejected = sum(n for p, n in counts.items() if p <= level) / total
        # P(p ≤ t) = t at every attained t: exact, not merely conservative
        assert math.isclose(rejected, level, rel_tol=1e-9), (level, rejected)
    assert min(counts) < 0.02  # small levels are reachable here, and exact too


def test_a_case_whose_samples_are_all_equal_carries_nothing():
    varied = [([1.0, 1.0, 1.0, 1.0, 1.0], [0.0, 0.0]), ([1.0, 0.0, 1.0, 1.0, 0.0], [1.0, 0.0])]
    with_constant = [*varied, ([1.0] * 5, [1.0, 1.0]), ([0.0] * 5, [0.0, 0.0])]
    a, b = evidence_test(varied), evidence_test(with_constant)
    assert a is not None and b is not None
    assert a.p_drop == b.p_drop and a.min_p_drop == b.min_p_drop
    assert evidence_test([([1.0] * 4, [1.0] * 4)]) == Result(0.0, 1.0, 1.0, b.method, 1.0, 1.0)


def test_three_broken_reliable_cases_stand_out_of_twenty_flaky_ones():
    """Where the unweighted statistic drowns three outright breaks in the flaky cases' variance, the per-case
    evidence finds them: each scores −ln(0.5/1287) ≈ 7.9 (mid-p), an unchanged flaky case about 1."""
    broken = [([1.0] * 5, [0.0] * 8)] * 3
    flaky = [([1.0, 0.0, 1.0, 0.0, 1.0], [1.0, 0.0, 1.0, 1.0, 0.0, 1.0, 0.0, 1.0])] * 10  # 3/5 → 5/8
    flaky += [([0.0, 1.0, 0.0, 1.0, 0.0], [0.0, 1.0, 0.0, 0.0, 1.0, 0.0, 1.0, 0.0])] * 10  # 2/5 → 3/8
    evidence, unweighted = evidence_test(broken + flaky), stratified_test(broken + flaky)
    assert evidence is not None and unweighted is not None
    assert evidence.p_drop < 0.001 < 0.01 < unweighted.p_drop
    assert math.isclose(evidence.delta, unweighted.delta)


def test_group_tests_use_the_per_case_evidence_and_fall_back_when_it_cannot_be_enumerated():
    pairs = [([1.0] * 5, [0.0] * 5), ([1.0, 0.0, 1.0], [0.0, 1.0, 1.0])]
    test = group_test(Strata([(list(b), list(c)) for b, c in pairs], [], []))
    assert test is not None and test.method.startswith("exact per-case evidence")
    # 20 + 20 distinct rubric scores: C(40, 20) splits, too many to enumerate — the unweighted test decides
    wide = [([i / 40 for i in range(20)], [i / 40 + 0.01 for i in range(20, 40)])]
    fallback = group_test(Strata([(list(b), list(c)) for b, c in wide], [], []))
    assert fallback is not None and "stratified" in fallback.method


def test_extra_runs_go_to_cases_whose_first_round_could_be_a_drop():
    assert undecided([1.0] * 5, [0.0, 1.0])  # a reliable case failing one of two: p = 6/21
    assert undecided([1.0] * 5, [0.0, 0.0])
    assert not undecided([1.0, 0.0, 1.0, 1.0, 0.0], [1.0, 0.0])  # one run below a flaky mean: p = 15/21
    assert not undecided([1.0] * 5, [1.0, 1.0])  # no worse
    assert not undecided([0.5, 0.5], [0.5, 0.5])


def _staged(broken: int, cases: int) -> list[StagedPair]:
    out = []
    for i in range(cases):
        now = 0.0 if i < broken else 1.0
        out.append(StagedPair([1.0] * 10, [1.0] * 5, [1.0] * 5, [now, now], [now] * 8 if i < broken else []))
    return out


def test_the_size_check_may_count_the_extra_rounds_estimate():
    staged = _staged(2, 30)
    assert extra_round_drop(staged) == -2 / 30  # two cases, 0 of 8 against 5 of 5, over 30 cases
    assert extra_round_drop(_staged(0, 30)) is None  # no case went on
    # a case that went on and recovered counts as it measured: a rise offsets the drop
    recovered = [*_staged(2, 30)[:29], StagedPair([1.0] * 10, [1.0] * 5, [0.0] * 5, [0.0, 0.0], [1.0] * 8)]
    assert extra_round_drop(recovered) == (-2 + 1) / 30
    # 0.04 first-round estimate is under a 0.05 tolerance; the extra round measured 0.067
    significant = Result(-0.04, 0.001, 1.0, "m", extra_delta=-2 / 30)
    verdict, _, note = verdict_for(-0.04, significant, 0.05, 0.001, 1.0, 0.01)
    assert verdict == "regressed" and note.delta == -2 / 30 and "extra runs" in (note.method or "")
    plain = Result(-0.04, 0.001, 1.0, "m")
    assert verdict_for(-0.04, plain, 0.05, 0.001, 1.0, 0.01)[0] == "unchanged"
    # never without the evidence: the size alone decides nothing
    assert verdict_for(-0.04, significant, 0.05, 0.2, 1.0, 0.01)[0] == "unchanged"
    test = group_test(Strata([(p.baseline, p.first + p.extra) for p in staged], [], [], staged))
    assert test is not None and test.extra_delta == -2 / 30 and test.p_drop < 0.01


def test_an_eval_set_with_three_reliable_cases_broken_among_flaky_ones_regresses():
    """The issue's scenario through the gate's own decision: the previous statistic left this set `inconclusive`."""
    broken = [([1.0] * 10, [0.0] * 5)] * 3
    flaky = [([1.0, 0.0] * 5, [1.0, 0.0, 1.0, 0.0, 1.0])] * 10 + [([0.0, 1.0] * 5, [0.0, 1.0, 0.0, 1.0, 0.0])] * 10
    pairs = [(list(b), list(c)) for b, c in broken + flaky]
    test = group_test(Strata(pairs, [], []))
    assert test is not None
    row = Summary(
        agent="a", eval_set_id="s", criterion="c", baseline=None, current=None, delta=test.delta,
        verdict="unchanged", reason="",
    )  # fmt: skip
    (decided,) = decide_gating([(row, test, 0.05)], 0.01)
    assert decided.verdict == "regressed"
    old = stratified_test(pairs)
    assert old is not None and old.p_drop > 0.01  # the unweighted sum drowned the three breaks


def test_a_convolution_too_large_falls_back_to_the_unweighted_test(monkeypatch):
    from adk_eval_gate.baseline import evidence

    pairs = [([1.0, 0.0, 1.0], [0.0, 1.0, 0.0])] * 40
    assert (exact := evidence_test(pairs)) is not None and exact.method == evidence.METHOD
    monkeypatch.setattr(evidence, "WORK_LIMIT", 100)  # thousands of varying cases, in miniature
    assert evidence_test(pairs) is None
    test = group_test(Strata([(list(b), list(c)) for b, c in pairs], [], []))
    assert test is not None and "stratified" in test.method


def test_dozens_of_runs_a_side_reach_the_far_tail_without_a_domain_error():
    """37 runs a side: the last split's mid-p is a difference of floats that can round to 0 or below."""
    for broken in (0, 1, 37):
        pairs = [
            ([1.0] * 37, [0.0] * broken + [1.0] * (37 - broken)),
            ([1.0, 0.0] * 18 + [1.0], [0.0, 1.0] * 18 + [0.0]),
        ]
        result = evidence_test(pairs)
        assert result is not None and 0.0 <= result.p_drop <= 1.0
    # past the cap (p < 8e-7) every split ties: the p-value is that tail's probability, still far below any alpha
    assert evidence_test([([1.0] * 37, [0.0] * 37)]).p_drop < 1e-6  # type: ignore[union-attr]
