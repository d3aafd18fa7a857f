"""Per-case evidence: an exact stratified test that weighs each case by what its own samples say.

The eval-set test's statistic (`stats.stratified_test`) adds up the cases' mean differences unweighted, so one
case that passed every baseline run and fails every pull-request run moves it by one, while twenty flaky cases
move it by about √20 · their spread by chance: a drop concentrated in a few cases drowns in the others' noise.
This test scores each case by its own exact one-sided p-value (Fisher's exact test on 0/1 scores, the exact
permutation test of its mean difference otherwise), `s = −ln p` (p its mid-p value, see `_case_scores`), and
adds the scores up (Fisher's combination, made exact). Each case's p-value is taken in its own conditional null
distribution — the relabellings of its pooled samples — so the statistic's null distribution given every case's
pooled samples is the convolution of the cases' score distributions, computed exactly:

* a case whose pooled samples are all equal has p = 1 whatever the labels: it carries nothing (left out);
* a reliable case broken outright (5 of 5 baseline runs passed, 0 of 8 now) scores −ln(0.5/1287) ≈ 7.9, where an
  unchanged flaky case scores about 1 on average: the evidence of a few broken cases adds up instead of being
  averaged with the rest;
* cases that could never reach a small p-value (one run a side) have a small maximum score and weigh little.

Scores are floored onto a grid of `GRID` (and capped at `CAP`): the statistic is then the sum of integers, and the
p-value is exact for that statistic — the same floored function of every relabelling is what the null counts.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from adk_eval_gate.baseline.stats import TestResult, case_distribution, case_key

GRID = 0.05  # the statistic's resolution, in units of −ln p
CAP = 14.0  # −ln p beyond this (p < 8e-7) adds nothing more: one case alone would already decide
# Past this many array cells the exact convolution would take seconds (a few thousand varying cases); the caller
# falls back to the unweighted test, whose normal approximation those many cases make accurate.
WORK_LIMIT = 200_000_000
METHOD = "exact per-case evidence (Fisher combination of exact per-case tests)"


def _score(p: float) -> int:
    """−ln p floored onto the grid; the tiny slack keeps p = 1 at 0 whatever the float rounding. A p-value that
    float subtraction took to 0 or below (the far tail of a case with dozens of runs) is past the cap anyway."""
    if p <= math.exp(-CAP):
        return int(CAP / GRID)
    return int(min(CAP, -math.log(min(1.0, p)) + 1e-12) / GRID)


def _case_scores(dist: dict[int, float]) -> tuple[dict[int, tuple[int, int]], dict[int, float], dict[int, float]]:
    """For each support key of one case's mean difference: (drop score, rise score); and the score distributions
    of the two directions under relabelling.

    The score is −ln of the case's *mid-p* value, P(D < d) + P(D = d)/2: on few runs a case's own p-value is very
    discrete, and an unchanged case sits at p ≈ 0.6–1 rather than around 0.5, so scoring by the plain p-value
    wastes the many small moves a diffuse drop is made of (10-point diffuse drop, 50 cases × 5 runs: 51.5% caught
    against 59.0% with mid-p, 400 simulated pull requests; concentrated drops 80.5% against 78.8%). The statistic
    may be any function of each case's outcome: its null distribution is computed for that function, so the test
    stays exact."""
    keys = sorted(dist)
    below = 0.0
    scores: dict[int, tuple[int, int]] = {}
    total = math.fsum(dist.values())
    for key in keys:
        here = dist[key]
        scores[key] = (_score(below + here / 2), _score(total - below - here / 2))
        below += here
    drop: dict[int, float] = {}
    rise: dict[int, float] = {}
    for key, (down, up) in scores.items():
        drop[down] = drop.get(down, 0.0) + dist[key]
        rise[up] = rise.get(up, 0.0) + dist[key]
    return scores, drop, rise


def _work(distributions: Sequence[dict[int, float]]) -> int:
    """The array cells `_convolve` will touch: each case adds its support's size times the running length."""
    length, work = 1, 0
    for dist in distributions:
        work += length * len(dist)
        length += max(dist)
    return work


def _convolve(distributions: Sequence[dict[int, float]]) -> np.ndarray:
    """The distribution of the sum of independent integer scores, dense from 0."""
    total = np.ones(1)
    for dist in distributions:
        grown = np.zeros(len(total) + max(dist))
        for score, p in dist.items():
            grown[score : score + len(total)] += p * total
        total = grown
    return total


def _tail(total: np.ndarray, observed: int) -> tuple[float, float]:
    """(P(T ≥ observed), P(T = its largest value)) of a dense distribution."""
    last = int(np.flatnonzero(total > 0)[-1])
    return min(1.0, float(total[observed:].sum())), float(total[last])


def evidence_test(strata: Sequence[tuple[Sequence[float], Sequence[float]]]) -> TestResult | None:
    """The per-case evidence test over `strata` (one (baseline samples, current samples) pair per case); None when
    no case has samples on both sides, some case's permutation distribution is too large to enumerate (scores
    that are neither 0/1 nor few), or the convolution would be too large (`WORK_LIMIT`): the caller keeps the
    unweighted test then."""
    pairs = [(b, c) for b, c in strata if b and c]
    if not pairs:
        return None
    delta = math.fsum(math.fsum(c) / len(c) - math.fsum(b) / len(b) for b, c in pairs) / len(pairs)
    drops: list[dict[int, float]] = []
    rises: list[dict[int, float]] = []
    observed_drop = observed_rise = 0
    for baseline, current in pairs:
        if len(set(baseline) | set(current)) <= 1:
            continue  # every relabelling is the same: p = 1 both ways
        dist = case_distribution(baseline, current)
        if dist is None:
            return None
        scores, drop, rise = _case_scores(dist)
        key = case_key(baseline, current)
        nearest = min(scores, key=lambda k: abs(k - key))  # the observed split is one of the support's points
        observed_drop += scores[nearest][0]
        observed_rise += scores[nearest][1]
        drops.append(drop)
        rises.append(rise)
    if not drops:
        return TestResult(delta, 1.0, 1.0, METHOD, 1.0, 1.0)
    if max(_work(drops), _work(rises)) > WORK_LIMIT:
        return None  # thousands of varying cases: the unweighted test's normal approximation is accurate there
    p_drop, min_drop = _tail(_convolve(drops), observed_drop)
    p_rise, min_rise = _tail(_convolve(rises), observed_rise)
    return TestResult(delta, p_drop, p_rise, METHOD, min_drop, min_rise)
