"""Adaptive against fixed runs on the example agent, side by side in one run: wall time, runs and the agent's
estimated cost of a pull request's evaluation, and the gate's verdict.

The example agent (scripted model, `--latency` seconds per model call, priced here like gemini-2.5-flash) runs its
eval set in four ways: the push run that builds the baseline (`num_runs: {min: 2, max: 8}` without a baseline to
decide against runs every case 8 times), and three pull-request runs compared with it — fixed 8 runs (what the
calibration says 80% power costs with fixed runs), fixed 5, and adaptive {min 2, max 8}. The agent is unchanged,
as on most pull requests, so no case is undecided after the first round. Then the same with one case broken (its
expected tool call edited in the copy the pull request sees would make it not comparable, so the break is in the
agent instead: `roll_die` answers a fixed 1), where that case's extra runs show.

    python bench/adaptive.py [--latency 0.2]
"""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile
import time
from pathlib import Path

from adk_eval_gate.baseline.stores import LoadedBaseline, LoadOutcome, identity_of
from adk_eval_gate.config.workflow_settings import GateSettings
from adk_eval_gate.gate.comparison_file import build_comparison
from adk_eval_gate.run.adaptive import Decider
from adk_eval_gate.run.pipeline import run_plan
from adk_eval_gate.run.plan import build_plan

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "hello_world"
PRICES = "judge: {prices: {scripted: {input: 0.30, output: 2.50}}}\n"


def _suite(work: Path, num_runs: str, name: str) -> Path:
    folder = work / name
    shutil.copytree(EXAMPLE, folder, ignore=shutil.ignore_patterns("__pycache__", "baseline", "recorded"))
    config = folder / "eval-gate.yml"
    # one process for every design: forked worker pools would make the comparison about start-up, not runs
    text = (
        config.read_text().replace("num_runs: 1", f"num_runs: {num_runs}").replace("run:\n", "run:\n  workers: 1\n", 1)
    )
    config.write_text(
        PRICES + text.replace("baseline: {store: file, path: baseline/results.json}", "baseline: {store: none}")
    )
    # the scripted model does not name itself in its responses; a real one does, and that is what gets priced
    agent = folder / "hello_world" / "agent.py"
    agent.write_text(
        agent.read_text().replace(
            "return LlmResponse(\n", 'return LlmResponse(\n        model_version="scripted-dice",\n'
        )
    )
    return config


def _break_agent(config: Path) -> None:
    agent = config.parent / "hello_world" / "agent.py"
    agent.write_text(agent.read_text().replace("return random.Random(int(sides)).randint(1, int(sides))", "return 1"))


def _measure(config: Path, decider: Decider | None):
    started = time.perf_counter()
    results = run_plan(build_plan(config), quiet=True, decider=decider)
    return results, time.perf_counter() - started


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--latency", type=float, default=0.2, help="seconds per model call")
    args = parser.parse_args()
    os.environ["FAKE_LLM_LATENCY"] = str(args.latency)
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        baseline, base_seconds = _measure(_suite(work, "{min: 2, max: 8}", "push"), None)
        cases = baseline.summary.total
        outcome = LoadOutcome(LoadedBaseline(baseline, identity_of(baseline, "push run")))
        print(
            f"example agent, {cases} cases, {args.latency:g} s per model call; baseline (push run, adaptive without a "
            f"baseline: every run): {sum(len(c.runs) for c in baseline.eval_sets[0].cases)} runs, {base_seconds:.2f} s"
        )
        for scenario in ("unchanged agent", "roll_die broken"):
            print(f"\n{scenario}:\n")
            print("| pull request run | runs | runs/case | wall time | agent cost | vs fixed 8 (time, cost) | gate |")
            print("|---|---|---|---|---|---|---|")
            reference = None
            for label, num_runs, adaptive in (
                ("fixed 8", "8", False),
                ("fixed 5", "5", False),
                ("adaptive {min 2, max 8}", "{min: 2, max: 8}", True),
            ):
                config = _suite(
                    work,
                    num_runs,
                    f"{scenario}-{label}".replace(" ", "_").replace("{", "").replace("}", "").replace(",", ""),
                )
                if scenario != "unchanged agent":
                    _break_agent(config)
                results, seconds = _measure(config, Decider(baseline) if adaptive else None)
                runs = sum(len(c.runs) for s in results.eval_sets for c in s.cases)
                cost = sum(u.cost_usd or 0.0 for u in results.agent_usage.values())
                verdict = build_comparison(results, outcome, GateSettings()).verdict
                reference = reference or (seconds, cost)
                print(
                    f"| {label} | {runs} | {runs / cases:.2f} | {seconds:.2f} s | ${cost:.6f} | "
                    f"{seconds / reference[0]:.2f}×, {cost / reference[1]:.2f}× | {verdict} |"
                )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
