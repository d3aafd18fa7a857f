"""The history at scale (issue #29): `ci`, `history show` and `baseline update` with a 200-record history, side by
side with the same commands without one, in one run; and the history database's size.

The suite is bench/html_report.py's generator (100 cases an eval set, two turns a case, its pass rates: 60 % of
cases always pass, 20 % pass a turn 90 % of the time, 20 % 60 %), written as eval sets and replayed from a recording
(the `replay` target), with its two deterministic criteria. One real `run` gives the results every record is built
from: 16 re-samplings of those results (each case's turns drawn again at its own pass rate, as a re-run of the
agent would) are reduced to records by the real `records.py`, and each of the history's records takes, case by
case, one of them at random — so a stable case reads the same in every record and a flaky one changes, as they
would on a real default branch. The history is written by the real `StoredHistory.with_record`.

Each command runs as its own process as a user starts it, interleaved with its pair; wall time and the process's
peak resident memory (ru_maxrss) are reported, medians of `--repeat`. Targets: `ci` with the history ≤ 1.5× `ci`
without it and ≤ 1 GiB; `history show` ≤ 2 s; `baseline update` ≤ 1.5× the same update without a history.

    python bench/history_scale.py [--cases 10000] [--records 200] [--repeat 3]
    python bench/history_scale.py --cases 100000 --generated --repeat 1   # no wall: 100,000 cases × 200 records
    python bench/history_scale.py --cases 100000 --generated --repeat 1 --keep DIR   # then, to measure again:
    python bench/history_scale.py --cases 100000 --generated --repeat 1 --reuse DIR  # (the build takes ~40 min)

`--skip-ci` leaves out the `ci` pair; `compare` then stands for the part of `ci` that reads the history.
`--generated` takes the generator's results as the run instead of replaying them (at 100,000 cases the replayed
run alone takes minutes and gigabytes on 2 cores, none of it the history's).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from adk_eval_gate.baseline.history.database import StoredHistory
from adk_eval_gate.baseline.history.record_format import HistoryRecord
from adk_eval_gate.baseline.history.records import record_of
from adk_eval_gate.baseline.stores import slim
from adk_eval_gate.results.build import read_results
from adk_eval_gate.results.results_format import InvocationResult, ResultsFile
from html_report import results  # bench/ is on sys.path when this script runs

CI_RATIO, UPDATE_RATIO, SHOW_SECONDS, MEMORY_LIMIT = 1.5, 1.5, 2.0, 1024 * 1024 * 1024
BRANCH_LIMIT = 100 * 1000 * 1000  # GitHub's contents API
CRITERIA = "{tool_trajectory_avg_score: 1.0, response_match_score: 0.8}"
POOL = 16
# Peak memory from the OS's accounting of the command's own process tree (GNU time's %M, KiB), not from inside
# Python: a child forked from this large process would inherit its high-water mark.
# CPU seconds (user + system) beside wall time: on a shared machine the wall time is mostly waiting for a core.
TIME = ["/usr/bin/time", "-f", "PEAK_KIB %M CPU %U %S"]


def write_suite(work: Path, cases: int, generated: bool) -> ResultsFile:
    """Eval sets, the recording the replay target plays, and two configs: with a history and without one. With
    `generated`, the generator's own results stand for the run (returned, slimmed), and nothing is replayed."""
    recorded, expected = results(1, cases, 1, per_set=100)
    evals = work / "evals"
    evals.mkdir(parents=True)
    by_set: dict[str, list] = {}
    for (_, set_id, eval_id), turns in expected.items():
        conversation = [t.model_dump(mode="json", exclude_none=True) for t in turns]
        by_set.setdefault(set_id, []).append({"eval_id": eval_id, "conversation": conversation})
    for set_id, eval_cases in by_set.items():
        (evals / f"{set_id}.evalset.json").write_text(json.dumps({"eval_set_id": set_id, "eval_cases": eval_cases}))
    for name, history in (
        ("with.yml", "history: {max_records: 200}\n"),
        ("without.yml", "history: {enabled: false}\n"),
    ):
        folder = "blessed" if name == "with.yml" else "plain"
        (work / name).write_text(
            f"baseline: {{store: file, path: {folder}/results.json}}\n{history}agents:\n  - name: support\n"
            f"    target: {{kind: replay, actuals: recorded.json}}\n    evalsets: ['evals/*.evalset.json']\n"
            f"    criteria: {CRITERIA}\n"
        )
    if generated:  # the configs name a recording: the slimmed results are one (never replayed here)
        run = slim(recorded)
        run.git.sha = "c" * 40
        (work / "recorded.json").write_text(run.model_dump_json())
        return run
    (work / "recorded.json").write_text(recorded.model_dump_json())
    return recorded


def resampled(run: str, seed: int) -> ResultsFile:
    """The run again: every turn of every case drawn at the case's own pass rate (the generator's), each run's and
    each case's score and status recomputed from them as the scorer does for 0/1 turn scores."""
    rng = random.Random(seed)
    copy = ResultsFile.model_validate_json(run)
    for eval_set in copy.eval_sets:
        for case in eval_set.cases:
            pass_rate = random.Random(case.eval_id).choice([1.0, 1.0, 1.0, 0.9, 0.6])
            for metric in case.metrics.values():
                for run_metric in metric.runs:
                    if run_metric is None or not run_metric.per_invocation:
                        continue
                    scores = [
                        (1.0 if rng.random() < pass_rate else 0.0) if pass_rate < 1.0 else i.score
                        for i in run_metric.per_invocation
                    ]
                    run_metric.per_invocation = [
                        InvocationResult(score=s, status="passed" if s >= metric.threshold else "failed")
                        for s in scores
                    ]
                    run_metric.score = statistics.fmean(s for s in scores if s is not None)
                    run_metric.status = "passed" if run_metric.score >= metric.threshold else "failed"
                kept = [r for r in metric.runs if r is not None and r.score is not None]
                if kept:
                    metric.per_invocation = [
                        statistics.fmean(r.per_invocation[i].score for r in kept)
                        for i in range(len(kept[0].per_invocation))
                    ]
                    metric.score = statistics.fmean(r.score for r in kept)
                    metric.status = "passed" if metric.score >= metric.threshold else "failed"
    return copy


def build_history(run: ResultsFile, records: int, repository: str | None, config: str) -> tuple[StoredHistory, float]:
    started = time.perf_counter()
    slimmed = slim(run).model_dump_json()  # a copy to draw again, without the agent's outputs
    pool = [record_of(run)]
    for seed in range(1, POOL):  # a case the draw left as it was shares the first record's object: less memory
        drawn = record_of(resampled(slimmed, seed))
        for position, eval_set in enumerate(drawn.eval_sets):
            first = pool[0].eval_sets[position].cases
            eval_set.cases.update({eid: first[eid] for eid, case in eval_set.cases.items() if first.get(eid) == case})
        pool.append(drawn)
    rng = random.Random(7)
    history = StoredHistory.empty(repository, config)
    for k in range(records):
        summary = pool[k % POOL]
        eval_sets = []
        for position, eval_set in enumerate(summary.eval_sets):
            cases = {eid: pool[rng.randrange(POOL)].eval_sets[position].cases[eid] for eid in eval_set.cases}
            eval_sets.append(eval_set.model_copy(update={"cases": cases}))
        sha = f"{k:08x}".ljust(40, "b")
        record = HistoryRecord.model_construct(
            sha=sha, date=f"2026-{1 + k // 28 % 12:02d}-{1 + k % 28:02d}T10:00:00+00:00", tool_version="0.2.0",
            eval_sets=eval_sets,
        )  # fmt: skip
        history = history.with_record(record, records)
    return history, time.perf_counter() - started


def measure(argv: list[str], cwd: Path, env: dict[str, str]) -> tuple[float, int, float]:
    """(wall seconds, peak resident KiB, CPU seconds) of one command in its own process."""
    started = time.perf_counter()
    done = subprocess.run(
        [*TIME, sys.executable, "-m", "adk_eval_gate", *argv], cwd=cwd, env=env, stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )  # fmt: skip
    wall = time.perf_counter() - started
    if done.returncode not in (0, 1):
        raise SystemExit(f"{argv[:2]} exited {done.returncode}: {done.stderr[-1500:]}")
    tail = done.stderr.rsplit("PEAK_KIB", 1)[1].split()
    return wall, int(tail[0]), float(tail[2]) + float(tail[3])


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--cases", type=int, default=10_000)
    parser.add_argument("--records", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--skip-ci", action="store_true", help="measure compare instead of ci (see the docstring)")
    parser.add_argument("--keep", help="keep the work folder here")
    parser.add_argument(
        "--reuse", help="measure in a folder an earlier --keep run built (its history, runs and configs), building none"
    )
    parser.add_argument(
        "--generated", action="store_true", help="the generator's results stand for the run (implies --skip-ci)"
    )
    args = parser.parse_args()
    args.skip_ci = args.skip_ci or args.generated
    work = Path(args.reuse or args.keep or tempfile.mkdtemp(prefix="adk-eval-gate-history-"))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "ADK_EVAL_GATE_"))}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(Path(__file__).parents[1] / "src"), env.get("PYTHONPATH")]))
    if args.reuse:
        data, build_seconds, run_seconds = (work / "pristine.db").read_bytes(), float("nan"), float("nan")
    else:
        data, build_seconds, run_seconds = build(work, args, env)
    per_case_record = len(data) / (args.cases * args.records)
    return measured(work, env, args, data, per_case_record, build_seconds, run_seconds)


def build(work: Path, args: argparse.Namespace, env: dict[str, str]) -> tuple[bytes, float, float]:
    """The suite, its run, the history and the configs in `work`: the database's bytes, build and run seconds."""
    run = write_suite(work, args.cases, args.generated)
    started = time.perf_counter()
    if args.generated:
        (work / "run.json").write_text(run.model_dump_json())
    else:
        del run
        subprocess.run(
            [sys.executable, "-m", "adk_eval_gate", "run", "--config", "with.yml", "--output", "run.json", "--quiet"],
            cwd=work, env={**env, "GITHUB_SHA": "c" * 40}, check=False, stdout=subprocess.DEVNULL,
        )  # fmt: skip
        run = read_results(work / "run.json")
    run_seconds = time.perf_counter() - started
    history, build_seconds = build_history(run, args.records, None, "with.yml")
    for folder in ("blessed", "plain"):
        (work / folder).mkdir()
        (work / folder / "results.json").write_text(slim(run).model_dump_json(indent=2) + "\n")
    data = history.to_bytes()
    (work / "pristine.db").write_bytes(data)
    shutil.copy(work / "pristine.db", work / "blessed" / "history.db")
    del history, run
    # The update blesses a new commit: the history appends its record and drops its oldest (200 stay 200).
    following = read_results(work / "run.json")
    following.git.sha = "d" * 40
    (work / "next.json").write_text(following.model_dump_json())
    return data, build_seconds, run_seconds


def measured(
    work: Path,
    env: dict[str, str],
    args: argparse.Namespace,
    data: bytes,
    per_case_record: float,
    build_seconds: float,
    run_seconds: float,
) -> int:
    """Each command side by side with its pair, `args.repeat` rounds; the table, and 0 when every target holds."""
    if args.skip_ci:
        pair = {
            "compare, no history": ["compare", "--config", "without.yml", "--results", "run.json", "--output",
                                    "a.json"],
            "compare, 200-record history": ["compare", "--config", "with.yml", "--results", "run.json", "--output",
                                            "b.json"],
        }  # fmt: skip
    else:
        pair = {
            "ci, no history": ["ci", "--config", "without.yml", "--output-dir", "out-a", "--quiet"],
            "ci, 200-record history": ["ci", "--config", "with.yml", "--output-dir", "out-b", "--quiet"],
        }
    rows: dict[str, list[tuple[float, int, float]]] = {name: [] for name in pair}
    updates = {
        "baseline update, no history": ["baseline", "update", "--config", "without.yml", "--results", "next.json"],
        "baseline update, 200-record history": ["baseline", "update", "--config", "with.yml", "--results",
                                                "next.json"],
    }  # fmt: skip
    rows.update({name: [] for name in updates})
    rows["history show"] = []
    rows["history show, no history (the import floor)"] = []
    for _ in range(args.repeat):
        shutil.copy(work / "pristine.db", work / "blessed" / "history.db")  # an update of the last round wrote it
        for name, argv in pair.items():
            rows[name].append(measure(argv, work, env))
        for name, argv in updates.items():
            shutil.copy(work / "pristine.db", work / "blessed" / "history.db")
            rows[name].append(measure(argv, work, env))
        shutil.copy(work / "pristine.db", work / "blessed" / "history.db")
        rows["history show"].append(measure(["history", "show", "--config", "with.yml"], work, env))
        rows["history show, no history (the import floor)"].append(
            measure(["history", "show", "--config", "without.yml"], work, env)
        )

    def median(name: str) -> tuple[float, float]:
        return statistics.median(r[0] for r in rows[name]), statistics.median(r[1] for r in rows[name]) / 1024

    def cpu(name: str) -> float:
        return statistics.median(r[2] for r in rows[name])

    print(
        f"history at scale: {args.cases:,} cases (two turns, two criteria) × {args.records} records, "
        f"{os.cpu_count()} cores, medians of {args.repeat}"
    )
    print(f"history.db {len(data) / 1e6:.1f} MB ({per_case_record:.1f} bytes per case per record); "
          f"built in {build_seconds:.0f} s; the replayed run took {run_seconds:.0f} s")  # fmt: skip
    print("| command | wall s | CPU s | peak memory MiB |")
    print("|---|---|---|---|")
    for name in rows:
        wall, peak = median(name)
        print(f"| {name} | {wall:.2f} | {cpu(name):.2f} | {peak:.0f} |")
    names = list(pair)
    ci_ratio = median(names[1])[0] / median(names[0])[0]
    update_ratio = median("baseline update, 200-record history")[0] / median("baseline update, no history")[0]
    show = median("history show")[0]
    peak = max(median(n)[1] for n in rows) * 1024 * 1024
    updates_cpu = cpu("baseline update, 200-record history") / cpu("baseline update, no history")
    print(f"{names[1]} ÷ {names[0]}: {ci_ratio:.2f}×, CPU {cpu(names[1]) / cpu(names[0]):.2f}× "
          f"(target ≤ {CI_RATIO}×)")  # fmt: skip
    print(f"baseline update with ÷ without the history: {update_ratio:.2f}×, CPU {updates_cpu:.2f}× "
          f"(target ≤ {UPDATE_RATIO}×)")  # fmt: skip
    print(f"history show: {show:.2f} s, {cpu('history show'):.2f} s CPU (target ≤ {SHOW_SECONDS} s); "
          f"the highest peak: {peak / 2**20:.0f} MiB (target ≤ 1024 MiB)")  # fmt: skip
    fits = len(data) <= BRANCH_LIMIT
    print(f"branch store: {len(data) / 1e6:.1f} MB {'within' if fits else 'OVER'} the contents API's 100 MB")
    ok = ci_ratio <= CI_RATIO and update_ratio <= UPDATE_RATIO and show <= SHOW_SECONDS and peak <= MEMORY_LIMIT
    return 0 if ok and fits else 1


if __name__ == "__main__":
    sys.exit(main())
