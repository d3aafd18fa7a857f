"""The drift gate's calibration, for `gate_calibration.py` (which prints it; `--drift-only` prints only it).

Simulated default branches: a history of ten records (the first run and nine merges), then a pull request that is
the tenth merge, on one eval set whose true pass rates follow the calibration's realistic mix, observed through a
judge that flips 5% of verdicts. Every default-branch run and the pull request run each case `num_runs` times.
A *cumulative drop* of D points is spread evenly over the ten merges, concentrated (each merge breaks further
cases, in a fixed order, until the mean has dropped by D): each pull request alone drops D/10.

The pull request is gated as `adk-eval-gate ci` gates it with `gate.drift.window: 10`: the eval-set verdict
against its base (the newest record) and the drift verdict against the record ten merges back (here the first),
both decided in one Holm family at gate.alpha (`decide_gating`), the drift test run on pass/fail samples from the
record's per-case counts (`stratified_test`, as `baseline.history.drift` does). Beside it, the gate as it was
before the history: the verdict against the base alone.
"""

from __future__ import annotations

import random
import statistics

from adk_eval_gate.baseline.compare import decide_gating
from adk_eval_gate.baseline.comparison_format import DriftRow, Summary
from adk_eval_gate.baseline.stats import stratified_test
from adk_eval_gate.config.workflow_settings import GateSettings

MERGES = 10
CUMULATIVE = (0.0, 0.05, 0.10, 0.20)
CRITERION = "tool_trajectory_avg_score"


def progressive(rates: list[float], drop: float, order: list[int]) -> list[float]:
    """`rates` after a concentrated drop of `drop` (mean), breaking cases in `order`: more drop, more cases broken."""
    current = list(rates)
    remaining = drop * len(rates)
    for index in order:
        if remaining <= 1e-12:
            break
        loss = min(0.5, current[index], remaining)
        current[index] -= loss
        remaining -= loss
    return current


def _row(kind: str, test, tolerance: float):
    fields = {"agent": "agent", "criterion": CRITERION, "baseline": None, "current": None, "delta": test.delta}
    if kind == "drift":
        row = DriftRow(verdict="unchanged", reason="", **fields)
    else:
        row = Summary(eval_set_id="set", verdict="unchanged", reason="", **fields)
    return row, test, tolerance


def one_pull_request(
    rng: random.Random, rates_for, observe, runs: int, cumulative: float, cases: int, gate: GateSettings
) -> tuple[bool, bool]:
    """(the gate with drift fails, the gate against the base alone fails) for one simulated pull request."""
    rates = rates_for(rng, cases)
    order = rng.sample(range(cases), cases)
    step = cumulative / MERGES
    reference = [observe(r, runs, rng) for r in rates]  # the first record
    base = [observe(r, runs, rng) for r in progressive(rates, step * (MERGES - 1), order)]  # after nine merges
    current = [observe(r, runs, rng) for r in progressive(rates, cumulative, order)]  # the tenth merge
    tolerance = gate.tolerance_for(CRITERION)
    against_base = _row("set", stratified_test(list(zip(base, current, strict=True))), tolerance)
    drift = _row("drift", stratified_test(list(zip(reference, current, strict=True))), tolerance)
    with_drift = any(row.verdict == "regressed" for row in decide_gating([against_base, drift], gate.alpha))
    (alone,) = decide_gating([_row("set", against_base[1], tolerance)], gate.alpha)
    return with_drift, alone.verdict == "regressed"


def drift_cells(prs: int, runs_list, rates_for, observe, cases: int) -> dict[tuple[int, float], tuple[float, float]]:
    gate = GateSettings()
    cells = {}
    for runs in runs_list:
        for cumulative in CUMULATIVE:
            rng = random.Random(f"drift-{cases}-{runs}-{cumulative}")
            outcomes = [one_pull_request(rng, rates_for, observe, runs, cumulative, cases, gate) for _ in range(prs)]
            cells[(runs, cumulative)] = (
                statistics.fmean(a for a, _ in outcomes),
                statistics.fmean(b for _, b in outcomes),
            )
    return cells


def print_drift(prs: int, runs_list, rates_for, observe) -> float:
    """Prints the drift tables; returns the worst false-alarm rate of the gate with drift."""
    worst = 0.0
    for cases in (50, 100):
        cells = drift_cells(prs, runs_list, rates_for, observe, cases)
        print()
        print(
            f"Drift gate (gate.drift.window {MERGES}), {cases} cases in one eval set, {prs} pull requests per cell: "
            f"a cumulative drop spread over {MERGES} merges, the pull request being the last. Cells: gate with drift "
            "/ against the base alone."
        )
        print()
        print("| num_runs | false alarms | power, 5-pt cumulative | 10-pt | 20-pt |")
        print("|---|---|---|---|---|")
        for runs in runs_list:
            row = " | ".join(f"{cells[(runs, d)][0]:.1%} / {cells[(runs, d)][1]:.1%}" for d in CUMULATIVE)
            print(f"| {runs} | {row} |")
            worst = max(worst, cells[(runs, 0.0)][0])
    return worst
