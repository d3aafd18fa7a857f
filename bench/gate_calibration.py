"""How often does the gate cry wolf, and how often does it catch a real drop?

Simulated pull requests: 50 cases whose true pass probabilities follow a realistic mix (most cases reliable,
some flaky, a few hard), observed through a noisy judge (5% of verdicts flipped). The baseline and the pull
request each run every case `num_runs` times. "Same agent" measures false alarms; drops of 5, 10 and 20 points
in the mean pass rate measure power, under two models of a regression: *diffuse* (every case loses in proportion
to its pass rate: the hardest case to detect) and *concentrated* (the change breaks some cases: random cases lose
up to 50 points each until the mean has dropped by the amount). The gate's eval-set
verdict (the stratified test and rule `adk-eval-gate compare` uses, default alpha and tolerance) is set beside
the naive rule "any drop in the mean is a regression". Fixed seeds; `--prs` pull requests per cell.

Many small eval sets — ten files of one case each (the legacy `.test.json` layout) and ten of three — are
gated as `compare` gates them: every eval-set verdict and the agent's pooled verdict in one Holm family
(`decide_gating`); a false alarm is any of them `regressed`. Their power is shown for concentrated drops and for
an agent that breaks every case (true pass rate 0 everywhere, e.g. it stopped calling its tools).

    python bench/gate_calibration.py [--prs 1000] [--quick]
"""

from __future__ import annotations

import argparse
import random
import statistics
import time

from adk_eval_gate.baseline.compare import decide_gating
from adk_eval_gate.baseline.models import PooledSummary, Summary
from adk_eval_gate.baseline.stats import stratified_test
from adk_eval_gate.config.models import GateSettings

CASES = 50
JUDGE_FLIP = 0.05
RUNS = (1, 3, 5)
DROPS = (0.0, 0.05, 0.10, 0.20)
SMALL_SETS = 10  # eval sets per small layout
SMALL_LAYOUTS = (1, 3)  # cases per eval set
BROKEN = 1.0  # the "drop" that stands for every case broken
SMALL_DROPS = (0.0, 0.10, 0.20, BROKEN)
CRITERION = "tool_trajectory_avg_score"


def true_pass_rates(rng: random.Random, cases: int = CASES) -> list[float]:
    rates = []
    for _ in range(cases):
        kind = rng.random()
        if kind < 0.60:
            rates.append(rng.uniform(0.90, 1.00))  # reliable
        elif kind < 0.85:
            rates.append(rng.uniform(0.50, 0.90))  # flaky
        else:
            rates.append(rng.uniform(0.00, 0.50))  # hard
    return rates


def observed(rate: float, runs: int, rng: random.Random) -> list[float]:
    seen = rate * (1 - JUDGE_FLIP) + (1 - rate) * JUDGE_FLIP
    return [1.0 if rng.random() < seen else 0.0 for _ in range(runs)]


def diffuse(rates: list[float], drop: float, rng: random.Random) -> list[float]:
    mean_rate = statistics.fmean(rates)
    return [max(0.0, r - drop * r / mean_rate) for r in rates]


def concentrated(rates: list[float], drop: float, rng: random.Random) -> list[float]:
    current = list(rates)
    remaining = drop * len(rates)
    for index in rng.sample(range(len(rates)), len(rates)):
        if remaining <= 1e-12:
            break
        loss = min(0.5, current[index], remaining)
        current[index] -= loss
        remaining -= loss
    return current


MODELS = {"diffuse": diffuse, "concentrated": concentrated}


def _verdicted(strata: list[tuple[list[float], list[float]]], set_id: str | None, tolerance: float):
    fields = {"agent": "agent", "criterion": CRITERION, "baseline": None, "current": None, "verdict": "unchanged",
              "reason": ""}
    test = stratified_test(strata)
    row = (Summary(eval_set_id=set_id, delta=test.delta, **fields) if set_id is not None
           else PooledSummary(delta=test.delta, **fields))
    return row, test, tolerance


def gate_regressed(eval_sets: list[list[tuple[list[float], list[float]]]], gate: GateSettings) -> bool:
    """The gate's decision over one agent's eval sets, exactly as `compare` reaches it: any gating regression."""
    tolerance = gate.tolerance_for(CRITERION)
    family = [_verdicted(strata, f"set{i}", tolerance) for i, strata in enumerate(eval_sets)]
    if len(eval_sets) >= 2:  # `compare` pools an agent's criterion over two or more eval sets
        family.append(_verdicted([pair for strata in eval_sets for pair in strata], None, tolerance))
    decide_gating(family, gate.alpha)
    return any(row.verdict == "regressed" for row, _, _ in family)


def one_pr(rng: random.Random, runs: int, drop: float, gate: GateSettings, model=diffuse, sets: int = 1,
           cases_per_set: int = CASES) -> tuple[bool, bool]:
    """(gate says regressed, naive rule says regressed) for one simulated pull request."""
    base_rates = true_pass_rates(rng, sets * cases_per_set)
    current_rates = [0.0] * len(base_rates) if drop == BROKEN else model(base_rates, drop, rng)
    strata = [(observed(b, runs, rng), observed(c, runs, rng)) for b, c in zip(base_rates, current_rates, strict=True)]
    eval_sets = [strata[i * cases_per_set:(i + 1) * cases_per_set] for i in range(sets)]
    naive = statistics.fmean(statistics.fmean(c) for _, c in strata) < statistics.fmean(statistics.fmean(b) for b, _ in strata)
    return gate_regressed(eval_sets, gate), naive


def _rates(flags: list[tuple[bool, bool]]) -> tuple[float, float]:
    return sum(f for f, _ in flags) / len(flags), sum(n for _, n in flags) / len(flags)


def _cell(rates: tuple[float, float]) -> str:
    return f"{rates[0]:.1%} / {rates[1]:.1%}"


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--prs", type=int, default=1000)
    parser.add_argument("--quick", action="store_true", help="200 pull requests per cell: a rough look in seconds")
    parser.add_argument("--runs", default="1,3,5", help="num_runs values to simulate, comma-separated")
    args = parser.parse_args()
    prs = 200 if args.quick else args.prs
    global RUNS
    RUNS = tuple(int(r) for r in args.runs.split(","))
    gate = GateSettings()
    started = time.perf_counter()
    table: dict[tuple[str, int, float], tuple[float, float]] = {}
    for name, model in MODELS.items():
        for runs in RUNS:
            for drop in DROPS:
                if drop == 0.0 and name != "diffuse":
                    table[(name, runs, drop)] = table[("diffuse", runs, drop)]  # the same agent, whatever the model
                    continue
                rng = random.Random(f"{name}-{runs}-{drop}")
                table[(name, runs, drop)] = _rates([one_pr(rng, runs, drop, gate, model) for _ in range(prs)])
    small: dict[tuple[int, int, float], tuple[float, float]] = {}
    for cases in SMALL_LAYOUTS:
        for runs in RUNS:
            for drop in SMALL_DROPS:
                rng = random.Random(f"small-{cases}-{runs}-{drop}")
                small[(cases, runs, drop)] = _rates([one_pr(rng, runs, drop, gate, concentrated, SMALL_SETS, cases)
                                                     for _ in range(prs)])
    print(f"{prs} simulated pull requests per cell; judge flips {JUDGE_FLIP:.0%} of verdicts; "
          f"gate alpha {gate.alpha}, tolerance {gate.tolerance}. Cells: gate / naive rule.")
    for name in MODELS:
        print()
        print(f"{CASES} cases in one eval set, {name} drops:")
        print()
        print(f"| num_runs | false alarms | power, 5-pt drop ({name}) | 10-pt | 20-pt |")
        print("|---|---|---|---|---|")
        for runs in RUNS:
            print(f"| {runs} | {' | '.join(_cell(table[(name, runs, d)]) for d in DROPS)} |")
    for cases in SMALL_LAYOUTS:
        print()
        print(f"{SMALL_SETS} eval sets of {cases} case{'s' if cases > 1 else ''} each (eval-set and pooled verdicts, one "
              "Holm family), concentrated drops:")
        print()
        print("| num_runs | false alarms | power, 10-pt drop | 20-pt | every case broken |")
        print("|---|---|---|---|---|")
        for runs in RUNS:
            print(f"| {runs} | {' | '.join(_cell(small[(cases, runs, d)]) for d in SMALL_DROPS)} |")
    print()
    false_alarms = [table[("diffuse", r, 0.0)][0] for r in RUNS] + [small[(c, r, 0.0)][0] for c in SMALL_LAYOUTS for r in RUNS]
    worst_false_alarm = max(false_alarms)
    key_runs = 5 if 5 in RUNS else RUNS[-1]
    power = {name: table[(name, key_runs, 0.10)][0] for name in MODELS}
    ok = worst_false_alarm <= 0.02 and power["concentrated"] >= 0.80
    print(f"worst false-alarm rate over all {len(false_alarms)} layouts × num_runs {worst_false_alarm:.1%} (target <= 2%); "
          f"power for a 10-point drop with {key_runs} runs, {CASES} cases: {power['concentrated']:.1%} concentrated, "
          f"{power['diffuse']:.1%} diffuse (target >= 80%)  [{time.perf_counter() - started:.1f}s]")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
