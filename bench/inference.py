"""Running the example agent (50 ms per model call) on 200 two-turn cases: `adk-eval-gate run` (adk target,
concurrency 16) against `adk eval` on the same agent and eval set, in the same run, and against the ideal
(total model latency / concurrency).

Both tools run as the user runs them (fresh processes, wall time includes start-up); our inference phase is also
read from the results file. Both must agree on every case's verdict, or the benchmark fails.

    python bench/inference.py [--cases 200] [--latency 0.05] [--concurrency 16]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "hello_world"
BIN = Path(sys.executable).parent
CALLS_PER_TURN = 2  # the tool call, then the summary


def roll_die(sides: int) -> int:
    return random.Random(int(sides)).randint(1, int(sides))


def check_prime(nums: list[int]) -> str:
    primes = [n for n in nums if n >= 2 and all(n % d for d in range(2, int(n**0.5) + 1))]
    return f"{', '.join(map(str, primes))} are prime numbers." if primes else "No prime numbers found."


def write_eval_set(path: Path, cases: int) -> None:
    rng = random.Random(7)

    def turn(query: str, answer: str, name: str, args: dict) -> dict:
        return {
            "user_content": {"role": "user", "parts": [{"text": query}]},
            "final_response": {"role": "model", "parts": [{"text": answer}]},
            "intermediate_data": {"tool_uses": [{"name": name, "args": args}]},
        }

    eval_cases = []
    for i in range(cases):
        sides, a, b = rng.randint(4, 100), rng.randint(2, 60), rng.randint(2, 60)
        eval_cases.append(
            {
                "eval_id": f"case_{i:03d}",
                "session_input": {"app_name": "hello_world", "user_id": "u", "state": {}},
                "conversation": [
                    turn(
                        f"Roll a {sides} sided die",
                        f"I rolled a {sides} sided die and got {roll_die(sides)}.",
                        "roll_die",
                        {"sides": sides},
                    ),
                    turn(f"Are {a} and {b} prime?", check_prime([a, b]), "check_prime", {"nums": [a, b]}),
                ],
            }
        )
    path.write_text(json.dumps({"eval_set_id": "bench", "eval_cases": eval_cases}))


BARE_RUNNER = """
import asyncio, json, sys, time
sys.path.insert(0, sys.argv[1])
from hello_world.agent import root_agent
from google.adk.runners import Runner
from google.adk.sessions.in_memory_session_service import InMemorySessionService
from google.genai import types

async def main(cases, concurrency):
    sessions = InMemorySessionService()
    runner = Runner(app_name="hello_world", agent=root_agent, session_service=sessions)
    gate = asyncio.Semaphore(concurrency)

    async def run(case):
        async with gate:
            session = await sessions.create_session(app_name="hello_world", user_id="u")
            for turn in case["conversation"]:
                content = types.Content.model_validate(turn["user_content"])
                async for _ in runner.run_async(user_id="u", session_id=session.id, new_message=content):
                    pass

    start = time.perf_counter()
    await asyncio.gather(*(run(c) for c in cases))
    print(time.perf_counter() - start)

cases = json.load(open(sys.argv[2]))["eval_cases"]
asyncio.run(main(cases, int(sys.argv[3])))
"""


def timed(argv: list[str], cwd: Path, env: dict) -> tuple[float, subprocess.CompletedProcess]:
    start = time.perf_counter()
    done = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=3600)
    return time.perf_counter() - start, done


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--cases", type=int, default=200)
    parser.add_argument("--latency", type=float, default=0.05)
    parser.add_argument("--concurrency", type=int, default=16)
    args = parser.parse_args()

    work = Path(tempfile.mkdtemp(prefix="adk-eval-gate-bench-"))
    shutil.copytree(EXAMPLE / "hello_world", work / "hello_world", ignore=shutil.ignore_patterns("__pycache__", ".adk"))
    write_eval_set(work / "bench.evalset.json", args.cases)
    (work / "eval_config.json").write_text(
        json.dumps({"criteria": {"tool_trajectory_avg_score": 1.0, "response_match_score": 0.8}})
    )
    (work / "gate.yml").write_text(
        f"run: {{concurrency: {args.concurrency}, timeout: 600}}\n"
        "agents:\n  - name: hello_world\n    target: {kind: adk, agent: hello_world}\n"
        "    evalsets: [bench.evalset.json]\n    eval_config: eval_config.json\n"
    )
    env = {**os.environ, "FAKE_LLM_LATENCY": str(args.latency), "ADK_DISABLE_LOAD_DOTENV": "1"}

    ours_wall, ours = timed(
        [str(BIN / "adk-eval-gate"), "run", "--config", "gate.yml", "--output", "results.json", "--quiet"], work, env
    )
    if ours.returncode not in (0, 1):
        print(ours.stderr[-3000:])
        return 1
    adk_wall, _adk = timed(
        [str(BIN / "adk"), "eval", "hello_world", "bench.evalset.json", "--config_file_path", "eval_config.json"],
        work,
        env,
    )

    # The floor for any in-process harness: ADK's Runner alone, no eval machinery, same cases and concurrency.
    (work / "bare_runner.py").write_text(BARE_RUNNER)
    _, bare = timed(
        [sys.executable, "bare_runner.py", str(work), "bench.evalset.json", str(args.concurrency)], work, env
    )
    bare_seconds = float(bare.stdout.strip().splitlines()[-1])

    results = json.loads((work / "results.json").read_text())
    (history,) = (work / "hello_world" / ".adk" / "eval_history").glob("*.evalset_result.json")
    adk_status = {
        c["eval_id"]: {1: "passed", 2: "failed", 3: "not_evaluated"}[c["final_eval_status"]]
        for c in json.loads(history.read_text())["eval_case_results"]
    }
    our_status = {c["eval_id"]: c["status"] for c in results["eval_sets"][0]["cases"]}
    model_seconds = args.cases * 2 * CALLS_PER_TURN * args.latency
    ideal = model_seconds / args.concurrency
    inference = results["timings"]["inference_seconds"]

    print(
        f"{args.cases} cases x 2 turns, {args.latency * 1000:.0f} ms per model call ({model_seconds:.1f} s of model "
        "latency)"
    )
    print(f"  adk eval (4 cases at a time)       : {adk_wall:7.2f} s wall")
    print(
        f"  adk-eval-gate run, concurrency {args.concurrency:<3} : {ours_wall:7.2f} s wall, {inference:.2f} s "
        "inference phase"
    )
    print(f"  ADK Runner alone, one process      : {bare_seconds:7.2f} s  (no eval harness: the in-process floor)")
    print(f"  ideal (model latency / concurrency): {ideal:7.2f} s")
    print(f"  speed-up vs adk eval (wall)        : {adk_wall / ours_wall:7.2f}x  (target >= 4x)")
    print(f"  inference phase / ideal            : {inference / ideal:7.2f}x  (target <= 1.25x)")
    print(f"  wall / ideal                       : {ours_wall / ideal:7.2f}x")
    print(f"  ADK Runner alone / ideal           : {bare_seconds / ideal:7.2f}x")
    print(
        f"  verdicts: {sum(s == 'passed' for s in our_status.values())}/{len(our_status)} passed; "
        f"identical to adk eval: {our_status == adk_status}"
    )
    shutil.rmtree(work, ignore_errors=True)
    return 0 if our_status == adk_status else 1


if __name__ == "__main__":
    raise SystemExit(main())
