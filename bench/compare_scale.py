"""`compare` on a large suite: CPU with Python's cyclic collector as the command runs it, against the same command
with the collector off, side by side in one run (issue: "linear, but mostly garbage collection").

Generated suites (bench/html_report.py's generator: 100 cases an eval set, two turns a case, three criteria,
real models); the pull request's results and the baseline are written to disk, then each variant runs as its own
process, interleaved, and its CPU seconds (user + system, from the OS) are compared. Target: within 1.2× of the
collector-off CPU.

    python bench/compare_scale.py [--cases 10000] [--runs 1] [--repeat 3]
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from html_report import results  # bench/ is on sys.path when this script runs

TARGET = 1.2
COLLECTOR_OFF = (
    "import gc, sys; gc.disable(); gc.disable = gc.enable = (lambda: None); "
    "from adk_eval_gate.commands.main import main; sys.exit(main(sys.argv[1:]))"
)


def _cpu_of(argv: list[str]) -> tuple[float, float]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode not in (0, 1):
        raise SystemExit(f"{argv[:3]}… exited {done.returncode}: {done.stderr[-800:]}")
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), wall


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--cases", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="adk-eval-gate-compare-"))
    for name, seed, drop in (("baseline", 1, 0.0), ("current", 2, 0.3)):
        data, _ = results(seed, args.cases, args.runs, per_set=100, drop=drop)
        (work / f"{name}.json").write_text(data.model_dump_json(), encoding="utf-8")
    size = (work / "current.json").stat().st_size
    common = ["compare", "--results", str(work / "current.json"), "--baseline", str(work / "baseline.json")]
    variants = {
        "as shipped": [sys.executable, "-m", "adk_eval_gate", *common, "--output", str(work / "a.json")],
        "collector off": [sys.executable, "-c", COLLECTOR_OFF, *common, "--output", str(work / "b.json")],
    }
    measured: dict[str, list[tuple[float, float]]] = {name: [] for name in variants}
    for _ in range(args.repeat):
        for name, argv in variants.items():  # interleaved: drift in the machine's load hits both alike
            measured[name].append(_cpu_of(argv))
    shape = f"{args.cases:,} cases × {args.runs} run(s), results file {size / 1e6:.1f} MB"
    print(f"compare, {shape}, {os.cpu_count()} cores")
    print("| variant | CPU s (median) | wall s (median) |")
    print("|---|---|---|")
    for name, samples in measured.items():
        cpu = statistics.median(s[0] for s in samples)
        wall = statistics.median(s[1] for s in samples)
        print(f"| {name} | {cpu:.2f} | {wall:.2f} |")
    ratio = statistics.median(s[0] for s in measured["as shipped"]) / statistics.median(
        s[0] for s in measured["collector off"]
    )
    print(f"CPU, as shipped ÷ collector off: {ratio:.2f}× (target ≤ {TARGET}×)")
    return 0 if ratio <= TARGET else 1


if __name__ == "__main__":
    sys.exit(main())
