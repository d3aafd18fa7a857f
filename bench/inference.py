"""Running an agent end to end: `adk-eval-gate run` (adk target) against `adk eval` on the same agent and
eval set, both started as a user starts them, in turn (ours, ADK's, ours, ...), in the same run.

The agent is bench/travel_agent: a scripted offline model (50 ms per call by default) behind four tools and a
long instruction, reporting no token usage. Every case has two turns of two model calls (the tool call, then the
answer). For each command: wall time, CPU seconds of the whole process tree (user + system, every descendant
included), the largest resident set of any one process, and the sampled peak of the tree's proportional set
size (shared pages split between the processes that share them; from one extra, sampled run of each, so that
sampling costs the timed runs nothing), plus the lines written to stderr. Both tools
must agree on every case's verdict, or the benchmark fails.

    python bench/inference.py [--cases 208] [--latency 0.05] [--concurrency 16] [--repeat 3] [--workers auto]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from travel_agent.agent import convert_currency, find_hotels, get_weather, search_flights, summary

HERE = Path(__file__).resolve().parent
BIN = Path(sys.executable).parent
TURNS, CALLS_PER_TURN = 2, 2
CITIES = [
    "Paris",
    "Berlin",
    "Madrid",
    "Lisbon",
    "Rome",
    "Vienna",
    "Prague",
    "Dublin",
    "Oslo",
    "Athens",
    "Zurich",
    "Warsaw",
    "Budapest",
    "Helsinki",
    "Brussels",
    "Amsterdam",
]


def write_eval_set(path: Path, cases: int) -> None:
    def turn(query: str, name: str, args: dict, result: object) -> dict:
        return {
            "user_content": {"role": "user", "parts": [{"text": query}]},
            "final_response": {"role": "model", "parts": [{"text": summary(name, args, result)}]},
            "intermediate_data": {"tool_uses": [{"name": name, "args": args}]},
        }

    eval_cases = []
    for i in range(cases):
        origin, destination = CITIES[i % len(CITIES)], CITIES[(i * 7 + 3) % len(CITIES)]
        date = f"2025-{1 + i % 12:02d}-{1 + i % 28:02d}"
        flight = {"origin": origin, "destination": destination, "date": date}
        first = turn(
            f"Find flights from {origin} to {destination} on {date}",
            "search_flights",
            flight,
            search_flights(**flight),
        )
        if i % 3 == 0:
            args = {"city": destination, "nights": 1 + i % 5}
            second = turn(
                f"And a hotel in {destination} for {args['nights']} nights?",
                "find_hotels",
                args,
                find_hotels(**args),
            )
        elif i % 3 == 1:
            second = turn(
                f"What is the weather in {destination}?",
                "get_weather",
                {"city": destination},
                get_weather(destination),
            )
        else:
            args = {"amount": 100 + i, "currency": ("EUR", "GBP", "JPY")[i % 3]}
            second = turn(
                f"Convert {args['amount']} USD to {args['currency']}",
                "convert_currency",
                args,
                convert_currency(**args),
            )
        eval_cases.append(
            {
                "eval_id": f"trip_{i:03d}",
                "conversation": [first, second],
                "session_input": {"app_name": "travel_desk", "user_id": "u", "state": {}},
            }
        )
    path.write_text(json.dumps({"eval_set_id": "trips", "eval_cases": eval_cases}))


def _tree(pid: int) -> list[int]:
    found, todo = [], [pid]
    while todo:
        current = todo.pop()
        found.append(current)
        try:
            for task in os.listdir(f"/proc/{current}/task"):
                todo += [int(c) for c in Path(f"/proc/{current}/task/{task}/children").read_text().split()]
        except OSError:
            pass
    return found


def _pss_kib(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            if line.startswith("Pss:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


@dataclass
class Measure:
    wall: float
    cpu: float
    max_rss_mib: float  # the largest single process
    tree_pss_mib: float  # sampled peak of the whole tree
    stderr_lines: int
    returncode: int


def measure(argv: list[str], cwd: Path, env: dict, *, sample: bool = False) -> Measure:
    """Wall, CPU and memory of the command's whole process tree: wait4 reports every descendant it reaped. The
    tree's PSS is sampled only when asked: reading smaps costs this process about 10 ms of CPU per sample of our
    five processes (2 ms for adk eval's one), CPU the timed command would lose on a 2-core machine."""
    peak = [0]
    start = time.perf_counter()
    process = subprocess.Popen(argv, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    done = threading.Event()

    def sample_pss() -> None:
        while not done.wait(0.25):  # reading smaps is not free: sampled sparingly, not to slow what is measured
            peak[0] = max(peak[0], sum(_pss_kib(p) for p in _tree(process.pid)))

    sampler = threading.Thread(target=sample_pss, daemon=True)
    if sample:
        sampler.start()
    stderr = process.stderr.read()
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - start
    done.set()
    if sample:
        sampler.join()
    process.returncode = os.waitstatus_to_exitcode(status)
    return Measure(
        wall,
        usage.ru_utime + usage.ru_stime,
        usage.ru_maxrss / 1024,
        peak[0] / 1024,
        stderr.decode(errors="replace").count("\n"),
        process.returncode,
    )


def prepare(work: Path, args: argparse.Namespace) -> None:
    shutil.copytree(HERE / "travel_agent", work / "travel_desk", ignore=shutil.ignore_patterns("__pycache__", ".adk"))
    write_eval_set(work / "trips.evalset.json", args.cases)
    (work / "eval_config.json").write_text(
        json.dumps({"criteria": {"tool_trajectory_avg_score": 1.0, "response_match_score": 0.8}})
    )
    (work / "gate.yml").write_text(
        f"run: {{concurrency: {args.concurrency}, timeout: 600, workers: {args.workers}}}\n"
        "agents:\n  - name: travel_desk\n    target: {kind: adk, agent: travel_desk, eval_history: true}\n"
        "    evalsets: [trips.evalset.json]\n    eval_config: eval_config.json\n"
    )


def history(work: Path) -> dict[str, str]:
    newest = max((work / "travel_desk" / ".adk" / "eval_history").glob("*.evalset_result.json"), key=os.path.getmtime)
    return {
        c["eval_id"]: {1: "passed", 2: "failed", 3: "not_evaluated"}[c["final_eval_status"]]
        for c in json.loads(newest.read_text())["eval_case_results"]
    }


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--cases", type=int, default=208)
    parser.add_argument("--latency", type=float, default=0.05)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--repeat", type=int, default=3, help="runs of each tool, interleaved")
    parser.add_argument("--workers", default="auto")
    args = parser.parse_args()

    root = Path(tempfile.mkdtemp(prefix="adk-eval-gate-bench-"))
    ours_dir, adk_dir = root / "ours", root / "adk"
    for work in (ours_dir, adk_dir):
        work.mkdir()
        prepare(work, args)
    env = {**os.environ, "FAKE_LLM_LATENCY": str(args.latency), "ADK_DISABLE_LOAD_DOTENV": "1"}
    ours_cmd = [
        sys.executable,
        "-m",
        "adk_eval_gate",
        "run",
        "--config",
        "gate.yml",
        "--output",
        "results.json",
        "--quiet",
    ]
    adk_cmd = [
        str(BIN / "adk"),
        "eval",
        "travel_desk",
        "trips.evalset.json",
        "--config_file_path",
        "eval_config.json",
    ]
    ours: list[Measure] = []
    adk: list[Measure] = []
    for _ in range(args.repeat):
        ours.append(measure(ours_cmd, ours_dir, env))
        adk.append(measure(adk_cmd, adk_dir, env))
        if ours[-1].returncode not in (0, 1):
            print(f"adk-eval-gate run exited {ours[-1].returncode}")
            return 1
    # Memory from one more run of each, sampled (see `measure`); the timings above are unsampled.
    ours_pss = measure(ours_cmd, ours_dir, env, sample=True).tree_pss_mib
    adk_pss = measure(adk_cmd, adk_dir, env, sample=True).tree_pss_mib

    results = json.loads((ours_dir / "results.json").read_text())
    our_status = {c["eval_id"]: c["status"] for c in results["eval_sets"][0]["cases"]}
    same = our_status == history(adk_dir) == history(ours_dir)
    calls = args.cases * TURNS * CALLS_PER_TURN
    ratios = [a.wall / o.wall for o, a in zip(ours, adk, strict=True)]

    def row(name: str, runs: list[Measure], pss: float) -> str:
        def med(f):
            return statistics.median(f(r) for r in runs)

        return (
            f"  {name:<22}{med(lambda r: r.wall):7.2f} s wall {med(lambda r: r.cpu):7.2f} s CPU "
            f"{med(lambda r: r.cpu) / calls * 1000:6.2f} ms CPU/call {med(lambda r: r.max_rss_mib):6.0f} MiB "
            f"{pss:6.0f} MiB {med(lambda r: r.stderr_lines):6.0f}"
        )

    print(
        f"{args.cases} cases x {TURNS} turns x {CALLS_PER_TURN} model calls = {calls} calls, "
        f"{args.latency * 1000:.0f} ms each; medians of {args.repeat} interleaved runs"
    )
    print(f"  {'':<22}{'wall':>9} {'CPU':>11} {'CPU per call':>16} {'max RSS':>10} {'tree PSS':>10} {'stderr':>6}")
    print(row(f"adk-eval-gate (c={args.concurrency})", ours, ours_pss))
    print(row("adk eval (4 at a time)", adk, adk_pss))
    print(
        f"  speed-up vs adk eval: {statistics.median(ratios):.2f}x median of pairs "
        f"({', '.join(f'{r:.2f}' for r in ratios)}; target >= 4x)"
    )
    print(f"  ideal wall (model latency / concurrency): {calls * args.latency / args.concurrency:.2f} s")
    print(
        f"  verdicts: {sum(s == 'passed' for s in our_status.values())}/{len(our_status)} passed; "
        f"identical to adk eval: {same}"
    )
    shutil.rmtree(root, ignore_errors=True)
    return 0 if same else 1


if __name__ == "__main__":
    raise SystemExit(main())
