"""False alarms and detections end to end, through the real CLI, on a noise model fitted to a published pass^k table.

A real ADK agent (tests/support/agents/noisy: a scripted model that calls its tool with a per-case probability,
seeded) runs a 30-case eval set whose per-case pass probabilities are drawn once from the τ-bench retail fit
(`power_simulation.TAU_RETAIL`, pass^1 0.604 … pass^4 0.383). For each simulated pull request:

1. `adk-eval-gate run --all-runs` builds a fresh baseline (the push run: `num_runs.max` runs a case), `num_runs`
   being what `init` writes for the suite (`power_simulation.size_runs`);
2. `adk-eval-gate run --baseline` runs the pull request adaptively against it, once unchanged and once with the
   three most reliable cases broken outright (their tool call never made);
3. `adk-eval-gate compare` writes comparison.json; the pull request counts as failed when a gating verdict (the
   eval set's) is `regressed`.

    python bench/noisy_e2e.py [--prs 30] [--cases 30]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.support.noisy_suite import write_noisy_eval_set  # noqa: E402

from adk_eval_gate.baseline import power_simulation  # noqa: E402
from adk_eval_gate.commands.main import main  # noqa: E402
from adk_eval_gate.results.build import read_results  # noqa: E402

AGENT = ROOT / "tests" / "support" / "agents" / "noisy"
BROKEN = 3
# power_simulation.TAU_RETAIL's fit (always, never, Beta a, b), repeated so that `--num-runs` can run this script
# against a checkout of the previous release too (PYTHONPATH=that/src), which lacks it: the "before" row
RETAIL_FIT = (0.07, 0.15, 1.3, 0.6)


def _rates(rng: random.Random, cases: int) -> list[float]:
    always, never, a, b = RETAIL_FIT
    drawn = []
    for _ in range(cases):
        u = rng.random()
        drawn.append(1.0 if u < always else 0.0 if u < always + never else rng.betavariate(a, b))
    return drawn


def _suite(folder: Path, keys: list[str], num_runs: str) -> Path:
    shutil.copytree(AGENT, folder / "noisy", ignore=shutil.ignore_patterns("__pycache__"))
    write_noisy_eval_set(folder, keys)
    config = folder / "gate.yml"
    config.write_text(
        "run: {workers: 1}\n"
        "agents:\n  - name: noisy\n    target: {kind: adk, agent: noisy}\n    evalsets: [s.evalset.json]\n"
        f"    criteria: {{tool_trajectory_avg_score: 1.0}}\n    num_runs: {num_runs}\n"
    )
    return config


def _cli(*args: str) -> int:
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        return main(list(args))


def _pull_request(folder: Path, config: Path, name: str, rates: dict[str, float], seed: str) -> tuple[bool, float]:
    """(a gating verdict regressed, runs per case) for one pull request against folder/base.json."""
    os.environ["NOISY_RATES"], os.environ["NOISY_SEED"] = json.dumps(rates), seed
    results, comparison = folder / f"{name}.json", folder / f"{name}-comparison.json"
    _cli("run", "--config", str(config), "--output", str(results), "--baseline", str(folder / "base.json"), "--quiet")
    _cli("compare", "--config", str(config), "--results", str(results), "--baseline", str(folder / "base.json"),
         "--output", str(comparison))  # fmt: skip
    verdicts = [s["verdict"] for s in json.loads(comparison.read_text())["summaries"]]
    cases = read_results(results).eval_sets[0].cases
    return "regressed" in verdicts, statistics.fmean(len(c.runs) for c in cases)


def main_bench() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--prs", type=int, default=30)
    parser.add_argument("--cases", type=int, default=30)
    parser.add_argument("--num-runs", help="MIN,MAX instead of what init writes for the suite")
    args = parser.parse_args()
    if args.num_runs:
        first, most = (int(n) for n in args.num_runs.split(","))
    else:
        sizing = power_simulation.size_runs(args.cases, 1, 0.01, 0.05)
        first, most = sizing.design.first_runs, sizing.design.max_runs
    keys = [f"k{i:02d}" for i in range(args.cases)]
    rng = random.Random("noisy-e2e")
    rates = dict(zip(keys, _rates(rng, args.cases), strict=True))
    reliable = sorted(keys, key=lambda k: -rates[k])[:BROKEN]
    broken = {**rates, **dict.fromkeys(reliable, 0.0)}
    started = time.perf_counter()
    alarms, detections, spent_same, spent_drop = [], [], [], []
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        config = _suite(folder, keys, f"{{min: {first}, max: {most}}}")
        sys.path.insert(0, str(folder))
        os.chdir(folder)
        for pr in range(args.prs):
            os.environ["NOISY_RATES"], os.environ["NOISY_SEED"] = json.dumps(rates), f"base-{pr}"
            _cli("run", "--config", str(config), "--output", str(folder / "base.json"), "--all-runs", "--quiet")
            alarm, same = _pull_request(folder, config, "same", rates, f"same-{pr}")
            caught, drop = _pull_request(folder, config, "broken", broken, f"broken-{pr}")
            alarms.append(alarm)
            detections.append(caught)
            spent_same.append(same)
            spent_drop.append(drop)
            print(f"pr {pr + 1}: false alarm {alarm}, detected {caught}, runs/case {same:.2f} / {drop:.2f}", flush=True)
    print()
    chosen_by = "" if args.num_runs else " (init's)"
    print(
        f"{args.cases} cases, τ-bench retail fit (mean pass rate {statistics.fmean(rates.values()):.2f}), "
        f"num_runs {{{first}, {most}}}{chosen_by}, broken: {', '.join(reliable)} "
        f"(pass rates {', '.join(f'{rates[k]:.2f}' for k in reliable)})"
    )
    print("| pull requests | false alarms | detected | runs/case, unchanged | runs/case, broken |")
    print("|---|---|---|---|---|")
    print(
        f"| {args.prs} | {sum(alarms)}/{args.prs} | {sum(detections)}/{args.prs} | "
        f"{statistics.fmean(spent_same):.2f} | {statistics.fmean(spent_drop):.2f} |"
    )
    print(f"[{time.perf_counter() - started:.0f}s]")
    return 0


if __name__ == "__main__":
    raise SystemExit(main_bench())
