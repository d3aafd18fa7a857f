"""`compare` and `ci` on a large suite: CPU with Python's cyclic collector as the command runs it, against the same
command with the collector off, and the memory a case costs, side by side in one run (issue #29: "linear, but
mostly garbage collection"; targets: within 1.2× of the collector-off CPU, at most 60 KB a case).

Generated suites (bench/html_report.py's generator: 100 cases an eval set, two turns a case, real models), once
at --cases and once at --small cases:
* `compare`: the pull request's results against a baseline results file (three criteria, one with judge votes);
* `ci`: a `replay` agent over the generated eval sets (written as ADK eval set files), its actual turns recorded
  in the pull request's results file, scored with the two deterministic criteria, compared with the baseline the
  same replay of the baseline's recordings made (a `file` store), outside GitHub Actions (the local mode: no
  comment; results, comparison and reports written).

Each variant runs as its own process (`python -c` calling the console entry, so both take the same path),
interleaved, and is measured by the OS (`wait4`): CPU = user + system of the process and its children; peak RSS
= the command's own largest resident set (VmHWM, written as it exits). Memory a case costs, two ways:
* peak: (peak RSS at --cases − peak RSS of the same command at --small cases) ÷ the difference in cases (the
  transient peak of reading and parsing included, so an upper bound of what the loaded data holds);
* at rest: in one probe process, the RSS held after the results file is read and compared (the comparison built)
  minus the RSS before, with the collector run, ÷ cases; and the size of results.json and comparison.json on disk
  a case.

    python bench/compare_scale.py [--cases 50000] [--small 500] [--runs 1] [--repeat 3] [--commands compare ci]
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
import time
from pathlib import Path

from html_report import results  # bench/ is on sys.path when this script runs

TARGET = 1.2
KB_PER_CASE_TARGET = 60
ENTRY = "import sys; from adk_eval_gate.commands.main import main; sys.argv[0] = 'adk-eval-gate'; sys.exit(main())"
COLLECTOR_OFF = "import gc; gc.disable(); gc.disable = gc.enable = (lambda: None); " + ENTRY
# The process's own peak resident set (VmHWM, reset at exec), written as it exits: wait4's ru_maxrss also counts the
# pages of the (large) bench process the child was forked from, before its exec.
PEAK = (
    "import atexit; atexit.register(lambda: open({path!r}, 'w').write("
    "next(l.split()[1] for l in open('/proc/self/status') if l.startswith('VmHWM'))));"
)
# What the probe holds at rest: the loaded results, its baseline and the comparison, after a full collection, over
# what the same code held once a small suite had been loaded and compared (its imports and caches).
PROBE = """
import gc, sys
from pathlib import Path
def rss():
    return int(Path('/proc/self/statm').read_text().split()[1]) * 4096
from adk_eval_gate.baseline.stores import LoadedBaseline, LoadOutcome, identity_of
from adk_eval_gate.config.workflow_settings import GateSettings
from adk_eval_gate.gate.comparison_file import build_comparison
from adk_eval_gate.results.build import read_results
def compared(current_path, baseline_path):
    base = read_results(Path(baseline_path))
    outcome = LoadOutcome(LoadedBaseline(base, identity_of(base, 'baseline')))
    return base, build_comparison(read_results(Path(current_path)), outcome, GateSettings())
warm = compared(sys.argv[3], sys.argv[4])  # kept: the code's own allocations (schemas, caches) count before
gc.collect(); before = rss()
current = read_results(Path(sys.argv[1]))
gc.collect(); loaded = rss()
base = read_results(Path(sys.argv[2]))
outcome = LoadOutcome(LoadedBaseline(base, identity_of(base, 'baseline')))
comparison = build_comparison(current, outcome, GateSettings())
gc.collect(); held = rss()
print(loaded - before, held - before)
"""
DETERMINISTIC = {"tool_trajectory_avg_score": {"threshold": 1.0, "match_type": "IN_ORDER"}, "response_match_score": 0.8}


def _measure(argv: list[str], cwd: Path) -> tuple[float, float, int]:
    """CPU seconds (process and reaped children, from wait4), wall seconds and the command's peak RSS in KB."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "ACTIONS_", "CI"))}
    peak = Path(tempfile.mktemp(prefix="adk-eval-gate-peak-"))
    argv = [*argv[:2], PEAK.format(path=str(peak)) + argv[2], *argv[3:]]  # argv: python -c CODE …
    with tempfile.TemporaryFile("w+") as err:
        started = time.perf_counter()
        child = subprocess.Popen(argv, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=err)
        _, status, usage = os.wait4(child.pid, 0)  # not Popen.wait: the kernel's usage comes with the status
        child.returncode = os.waitstatus_to_exitcode(status)
        err.seek(0)
        errors = err.read()
    wall = time.perf_counter() - started
    child.returncode = os.waitstatus_to_exitcode(status)
    if child.returncode not in (0, 1):
        raise SystemExit(f"{argv[2:5]}… exited {child.returncode}: {errors[-800:]}")
    peak_kb = int(peak.read_text())
    peak.unlink()
    return usage.ru_utime + usage.ru_stime, wall, peak_kb


def _suite(work: Path, cases: int, runs: int) -> Path:
    """Writes the two results files, the eval sets they were generated from, and the `ci` configs."""
    work.mkdir(parents=True)
    (work / "evals").mkdir()
    expected: dict = {}
    for name, seed, drop in (("baseline", 1, 0.0), ("current", 2, 0.3)):
        data, expected = results(seed, cases, runs, per_set=100, drop=drop)
        (work / f"{name}.json").write_text(data.model_dump_json(), encoding="utf-8")
    sets: dict[str, list[dict]] = {}
    for (_, set_id, eval_id), turns in expected.items():
        conversation = [t.model_dump(mode="json", exclude_none=True) for t in turns]
        sets.setdefault(set_id, []).append({"eval_id": eval_id, "conversation": conversation})
    for set_id, eval_cases in sets.items():
        body = {"eval_set_id": set_id, "eval_cases": eval_cases}
        (work / "evals" / f"{set_id}.evalset.json").write_text(json.dumps(body), encoding="utf-8")
    (work / "evals" / "eval_config.json").write_text(json.dumps({"criteria": DETERMINISTIC}), encoding="utf-8")
    for name, actuals in (("baseline-gate.yml", "baseline.json"), ("eval-gate.yml", "current.json")):
        (work / name).write_text(
            "baseline: {store: file, path: ci-baseline/results.json}\n"
            "agents:\n"
            "  - name: support\n"
            f"    target: {{kind: replay, actuals: {actuals}}}\n"
            "    evalsets: [evals/*.evalset.json]\n"
            "    eval_config: evals/eval_config.json\n"
            f"    num_runs: {runs}\n",
            encoding="utf-8",
        )
    # `ci`'s baseline: the same replay of the baseline's recordings, as a push to the default branch stores it
    made = [sys.executable, "-c", ENTRY, "run", "--config", "baseline-gate.yml", "--quiet"]
    _measure([*made, "--output", "ci-baseline/results.json"], work)
    return work


def _variants(work: Path, commands: list[str]) -> dict[str, tuple[list[str], str]]:
    compare = ["compare", "--results", "current.json", "--baseline", "baseline.json", "--output", "comparison.json"]
    ci = ["ci", "--config", "eval-gate.yml", "--quiet", "--output-dir", "ci-out"]
    chosen = {"compare": compare, "ci": ci}
    return {
        f"{command}, {kind}": ([sys.executable, "-c", code, *chosen[command]], command)
        for command in commands
        for kind, code in (("as shipped", ENTRY), ("collector off", COLLECTOR_OFF))
    }


def _median(samples: list[tuple[float, float, int]], index: int) -> float:
    return statistics.median(s[index] for s in samples)


def main() -> int:
    root = Path(tempfile.mkdtemp(prefix="adk-eval-gate-scale-"))
    try:
        return _bench(root)
    finally:
        shutil.rmtree(root, ignore_errors=True)  # over a gigabyte at 50,000 cases


def _bench(root: Path) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--cases", type=int, default=50_000)
    parser.add_argument("--small", type=int, default=500)
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--commands", nargs="+", choices=["compare", "ci"], default=["compare", "ci"])
    args = parser.parse_args()
    sizes = {
        args.small: _suite(root / "small", args.small, args.runs),
        args.cases: _suite(root / "large", args.cases, args.runs),
    }
    measured: dict[tuple[int, str], list[tuple[float, float, int]]] = {}
    for _ in range(args.repeat):
        for cases, work in sizes.items():
            for name, (argv, _) in _variants(work, args.commands).items():  # interleaved: load drift hits all alike
                measured.setdefault((cases, name), []).append(_measure(argv, work))
    large = sizes[args.cases]
    size = (large / "current.json").stat().st_size
    print(
        f"{args.cases:,} cases × {args.runs} run(s) (and {args.small:,}), results file {size / 1e6:.1f} MB, "
        f"{os.cpu_count()} cores, load {os.getloadavg()[0]:.1f} at the end, medians of {args.repeat}"
    )
    print("| command | cases | CPU s | wall s | peak RSS MB |")
    print("|---|---|---|---|---|")
    for (cases, name), samples in sorted(measured.items(), key=lambda item: (item[0][1], item[0][0])):
        cpu, wall, rss = _median(samples, 0), _median(samples, 1), _median(samples, 2)
        print(f"| {name} | {cases:,} | {cpu:.2f} | {wall:.2f} | {rss / 1024:.0f} |")
    ok = True
    for command in args.commands:
        shipped = _median(measured[(args.cases, f"{command}, as shipped")], 0)
        off = _median(measured[(args.cases, f"{command}, collector off")], 0)
        grown = _median(measured[(args.cases, f"{command}, as shipped")], 2) - _median(
            measured[(args.small, f"{command}, as shipped")], 2
        )
        per_case = grown / (args.cases - args.small)
        ok = ok and shipped / off <= TARGET
        print(
            f"{command}: CPU as shipped ÷ collector off {shipped / off:.2f}× (target ≤ {TARGET}×); "
            f"peak RSS a case {per_case:.1f} KB (informational: the target is memory at rest)"
        )
    files = ("current.json", "baseline.json")
    probe = subprocess.run(
        [sys.executable, "-c", PROBE, *(str(sizes[n] / f) for n in (args.cases, args.small) for f in files)],
        capture_output=True,
        text=True,
        check=True,
    )
    held_results, held_both = (int(n) for n in probe.stdout.split())
    ok = ok and held_both / args.cases / 1024 <= KB_PER_CASE_TARGET
    written = large / "comparison.json" if "compare" in args.commands else large / "ci-out" / "comparison.json"
    on_disk = {"current.json": (large / "current.json").stat().st_size, "comparison.json": written.stat().st_size}
    print(
        f"at rest, a case: loaded results {held_results / args.cases / 1024:.1f} KB, results + baseline + "
        f"comparison {held_both / args.cases / 1024:.1f} KB (target ≤ {KB_PER_CASE_TARGET} KB); on disk results.json "
        f"{on_disk['current.json'] / args.cases / 1024:.2f} KB, comparison.json "
        f"{on_disk['comparison.json'] / args.cases / 1024:.2f} KB"
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
