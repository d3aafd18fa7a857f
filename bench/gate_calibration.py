"""How often does the gate cry wolf, and how often does it catch a real drop?

Simulated pull requests: 50 cases whose true pass probabilities follow a realistic mix (most cases reliable,
some flaky, a few hard), observed through a noisy judge (5% of verdicts flipped). The baseline and the pull
request each run every case `num_runs` times. "Same agent" measures false alarms; drops of 5, 10 and 20 points
in the mean pass rate measure power, under two models of a regression: *diffuse* (every case loses in proportion
to its pass rate: the hardest case to detect) and *concentrated* (the change breaks some cases: random cases lose
up to 50 points each until the mean has dropped by the amount). The gate's eval-set
verdict (the stratified test and rule `adk-eval-gate compare` uses, default alpha and tolerance) is set beside
the naive rule "any drop in the mean is a regression". Fixed seeds; `--prs` pull requests per cell.

    python bench/gate_calibration.py [--prs 1000]
"""

from __future__ import annotations

import argparse
import random
import statistics
import time

from adk_eval_gate.baseline.compare import verdict_for
from adk_eval_gate.baseline.stats import stratified_test
from adk_eval_gate.config.models import GateSettings

CASES = 50
JUDGE_FLIP = 0.05
RUNS = (1, 3, 5)
DROPS = (0.0, 0.05, 0.10, 0.20)


def true_pass_rates(rng: random.Random) -> list[float]:
    rates = []
    for _ in range(CASES):
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


def one_pr(rng: random.Random, runs: int, drop: float, gate: GateSettings, model=diffuse) -> tuple[bool, bool]:
    """(gate says regressed, naive rule says regressed) for one simulated pull request."""
    base_rates = true_pass_rates(rng)
    current_rates = model(base_rates, drop, rng)
    strata = [(observed(b, runs, rng), observed(c, runs, rng)) for b, c in zip(base_rates, current_rates, strict=True)]
    test = stratified_test(strata)
    verdict, _, _ = verdict_for(test.delta, test, gate.tolerance_for("tool_trajectory_avg_score"), test.p_drop,
                                test.p_rise, gate.alpha)
    naive = statistics.fmean(statistics.fmean(c) for _, c in strata) < statistics.fmean(statistics.fmean(b) for b, _ in strata)
    return verdict == "regressed", naive


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--prs", type=int, default=1000)
    parser.add_argument("--runs", default="1,3,5", help="num_runs values to simulate, comma-separated")
    args = parser.parse_args()
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
                flags = [one_pr(rng, runs, drop, gate, model) for _ in range(args.prs)]
                table[(name, runs, drop)] = (sum(f for f, _ in flags) / args.prs, sum(n for _, n in flags) / args.prs)
    print(f"{args.prs} simulated pull requests per cell; {CASES} cases, judge flips {JUDGE_FLIP:.0%} of verdicts; "
          f"gate alpha {gate.alpha}, tolerance {gate.tolerance}. Cells: gate / naive rule.")
    for name in MODELS:
        print()
        print(f"| num_runs | false alarms | power, 5-pt drop ({name}) | 10-pt | 20-pt |")
        print("|---|---|---|---|---|")
        for runs in RUNS:
            cells = [f"{table[(name, runs, d)][0]:.1%} / {table[(name, runs, d)][1]:.1%}" for d in DROPS]
            print(f"| {runs} | {' | '.join(cells)} |")
    print()
    worst_false_alarm = max(table[("diffuse", r, 0.0)][0] for r in RUNS)
    key_runs = 5 if 5 in RUNS else RUNS[-1]
    power = {name: table[(name, key_runs, 0.10)][0] for name in MODELS}
    ok = worst_false_alarm <= 0.02 and power["concentrated"] >= 0.80
    print(f"worst false-alarm rate {worst_false_alarm:.1%} (target <= 2%); power for a 10-point drop with {key_runs} runs: "
          f"{power['concentrated']:.1%} concentrated, {power['diffuse']:.1%} diffuse (target >= 80%)  "
          f"[{time.perf_counter() - started:.1f}s]")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
