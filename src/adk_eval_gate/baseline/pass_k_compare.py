"""The pass^k gate (`gate.pass_k`): per eval set, the baseline's pass^k against the pull request's, and a drop
beyond `gate.pass_k.tolerance` that chance does not explain fails the gate (docs/pass-k.md).

The test is a stratified permutation test over the cases present on both sides with a threshold: within a case,
under "nothing changed" its runs are exchangeable between the baseline and the pull request, so given the case's
total passes the pull request's count is hypergeometric. The statistic is the mean over cases of the per-case
difference of the unbiased estimates, C(c₁,k)/C(n₁,k) − C(c₀,k)/C(n₀,k), a function of that count alone; its null
distribution is the convolution of the cases' own distributions — computed exactly while that stays small, drawn
(seeded) beyond, the observed labelling counted as one draw so the p-value stays valid. With k = 1 the statistic
is the difference in pass rate and the existing exact stratified test (`baseline.stats.stratified_test`) is used.
The eval sets' tests form their own Holm family at `gate.alpha`: the pass^k gate is opt-in and adds its own
false-alarm budget, as the drift tests do when they do not gate. Only an adaptive run's first round counts (its
extra runs went to cases chosen because they looked worse), as the drift gate reads it.
"""

from __future__ import annotations

import math
import random
import statistics
from collections.abc import Sequence

from adk_eval_gate.baseline.pass_k import RunTally, SetEstimate, estimate, set_estimate, tallies
from adk_eval_gate.baseline.pass_k_models import PassKRow
from adk_eval_gate.baseline.stats import TestResult, holm, stratified_test
from adk_eval_gate.results.results_format import EvalSetResult, ResultsFile

_GRID = 1e9  # per-case values merged on this grid: far finer than any pass^k difference that matters
SUPPORT_LIMIT = 50_000
DRAWS = 20_000

Stratum = tuple[RunTally, RunTally]  # (baseline, current) of one case


def _distribution(stratum: Stratum, k: int) -> dict[int, float]:
    """The null distribution of one case's difference on the grid: the pull request's passes, hypergeometric."""
    (c0, n0), (c1, n1) = stratum
    total, n = c0 + c1, n0 + n1
    denominator = math.comb(n, n1)
    found: dict[int, float] = {}
    for drawn in range(max(0, total - n0), min(total, n1) + 1):
        key = _key(drawn, total, n0, n1, k)
        found[key] = found.get(key, 0.0) + math.comb(total, drawn) * math.comb(n - total, n1 - drawn) / denominator
    return found


def _key(drawn: int, total: int, n0: int, n1: int, k: int) -> int:
    return round(((estimate(drawn, n1, k) or 0.0) - (estimate(total - drawn, n0, k) or 0.0)) * _GRID)


def _p_values(dists: Sequence[dict[int, float]], observed: int, seed: int) -> tuple[float, float, str]:
    slack = len(dists)  # rounding on the grid, at most one unit a case
    total: dict[int, float] | None = {0: 1.0}
    for dist in sorted(dists, key=len):
        assert total is not None
        merged: dict[int, float] = {}
        for a, pa in total.items():
            for b, pb in dist.items():
                merged[a + b] = merged.get(a + b, 0.0) + pa * pb
        total = merged if len(merged) <= SUPPORT_LIMIT else None
        if total is None:
            break
    if total is not None:
        p_drop = math.fsum(p for v, p in total.items() if v <= observed + slack)
        p_rise = math.fsum(p for v, p in total.items() if v >= observed - slack)
        return min(1.0, p_drop), min(1.0, p_rise), "exact stratified permutation"
    rng = random.Random(seed)
    columns = []
    for dist in dists:
        keys = list(dist)
        columns.append(rng.choices(keys, weights=[dist[v] for v in keys], k=DRAWS))
    sums = [sum(draw) for draw in zip(*columns, strict=True)]
    at_most = 1 + sum(s <= observed + slack for s in sums)
    at_least = 1 + sum(s >= observed - slack for s in sums)
    return at_most / (DRAWS + 1), at_least / (DRAWS + 1), "sampled stratified permutation"


def pass_k_test(strata: Sequence[Stratum], k: int, seed: int = 0) -> TestResult | None:
    """One-sided p-values for "the pull request's pass^k is lower" / "higher"; None without a case on both sides.
    Every case needs at least k runs a side (the caller has checked)."""
    if not strata:
        return None
    if k == 1:  # pass^1 is the pass rate: the gate's own exact test
        expanded = [([1.0] * c0 + [0.0] * (n0 - c0), [1.0] * c1 + [0.0] * (n1 - c1)) for (c0, n0), (c1, n1) in strata]
        return stratified_test(expanded, seed)
    differences = [(estimate(c1, n1, k) or 0.0) - (estimate(c0, n0, k) or 0.0) for (c0, n0), (c1, n1) in strata]
    delta = statistics.fmean(differences)
    varying = [s for s in strata if 0 < s[0][0] + s[1][0] < s[0][1] + s[1][1]]  # both outcomes seen
    if not varying:
        return TestResult(delta, 1.0, 1.0, "exact stratified permutation", 1.0, 1.0)
    observed = sum(_key(c1, c0 + c1, n0, n1, k) for (c0, n0), (c1, n1) in varying)
    p_drop, p_rise, method = _p_values([_distribution(s, k) for s in varying], observed, seed)
    return TestResult(delta, p_drop, p_rise, method)


def _short(estimate_: SetEstimate, side: str) -> str:
    names = ", ".join(estimate_.short[:3]) + (" …" if len(estimate_.short) > 3 else "")
    return f"the {side} has fewer than k={estimate_.k} runs of {names}"


def _pending(
    current: EvalSetResult, baseline: EvalSetResult, k: int
) -> tuple[PassKRow, TestResult | None, SetEstimate, SetEstimate] | None:
    """None for an eval set with no case with a threshold on either side (agents-cli metrics without
    `thresholds:`): it has no pass/fail, so no pass^k, and is not held to one."""
    old, new = tallies(baseline, first_round=True), tallies(current, first_round=True)
    if not old and not new:
        return None
    old_set, new_set = set_estimate(old, k), set_estimate(new, k)
    both = sorted(set(old) & set(new))
    row = PassKRow(
        agent=current.agent,
        eval_set_id=current.eval_set_id,
        k=k,
        baseline=old_set.value,
        baseline_interval=old_set.bounds,
        current=new_set.value,
        current_interval=new_set.bounds,
        cases_compared=len(both),
        verdict="not_estimable",
        reason="",
    )
    if old_set.short or new_set.short or not both:
        why = [_short(e, side) for e, side in ((old_set, "baseline"), (new_set, "pull request")) if e.short]
        reason = "; ".join(why) or "no case with a threshold on both sides"
        return row.model_copy(update={"reason": f"cannot be estimated: {reason}"}), None, old_set, new_set
    return row, pass_k_test([(old[e], new[e]) for e in both], k), old_set, new_set


def pass_k_rows(
    current: ResultsFile, baseline: ResultsFile | None, k: int, tolerance: float, alpha: float
) -> list[PassKRow]:
    """One row per eval set of the pull request that the baseline also has; Holm over the eval sets' tests."""
    if baseline is None:
        return []
    old_sets = {(s.agent, s.eval_set_id): s for s in baseline.eval_sets}
    pending = [
        found
        for s in current.eval_sets
        if (s.agent, s.eval_set_id) in old_sets and (found := _pending(s, old_sets[(s.agent, s.eval_set_id)], k))
    ]
    tested = [(i, test) for i, (_, test, _, _) in enumerate(pending) if test is not None]
    adjusted = dict(zip((i for i, _ in tested), holm([t.p_drop for _, t in tested]), strict=True))
    rows = []
    for i, (row, test, _, _) in enumerate(pending):
        if test is None:
            rows.append(row)
            continue
        p = adjusted[i]
        dropped = test.delta < -tolerance and p < alpha
        verdict = "dropped" if dropped else "unchanged"
        reason = (
            f"pass^{k} {row.baseline:.2f} → {row.current:.2f} ({test.delta:+.2f}) over {row.cases_compared} case(s), "
            f"p = {p:.3g} ({test.method}, Holm over {len(tested)} eval set(s)); "
            + ("dropped beyond" if dropped else "within chance or")
            + f" gate.pass_k.tolerance {tolerance:g}"
        )
        rows.append(row.model_copy(update={"delta": test.delta, "p_value": p, "verdict": verdict, "reason": reason}))
    return rows
