"""A finished run ends: three `run`s of a many-case suite at once, on a machine kept busy by a CPU burner, each end
within seconds of printing their results (they once waited five minutes for a history writer that waited for the
rest of a message). The agent is bench/travel_agent, a real ADK agent with a scripted offline model; every run
writes ADK eval history, so the history writer of each one is at work when its run finishes."""

from __future__ import annotations

import importlib.util
import multiprocessing
import os
import subprocess
import sys
import threading
import time
from argparse import Namespace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BOUND_SECONDS = 10.0  # each writes a 6 MB ADK history after its results; the hang this guards against was 300 s


def _burn(stop: multiprocessing.synchronize.Event) -> None:
    while not stop.is_set():
        sum(i * i for i in range(10_000))


def _prepare(folder: Path, cases: int) -> None:
    """bench/inference.py's suite: the travel agent, `cases` two-turn cases, ADK's own eval_config."""
    sys.path.insert(0, str(ROOT / "bench"))
    try:
        spec = importlib.util.spec_from_file_location("bench_inference", ROOT / "bench" / "inference.py")
        assert spec is not None and spec.loader is not None
        bench = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = bench  # its dataclasses look their module up
        spec.loader.exec_module(bench)
        bench.prepare(folder, Namespace(cases=cases, concurrency=16, workers="auto"))
    finally:
        while str(ROOT / "bench") in sys.path:  # bench/inference.py adds it too
            sys.path.remove(str(ROOT / "bench"))
        sys.modules.pop("bench_inference", None)
    config = folder / "gate.yml"
    config.write_text(config.read_text().replace("agent: travel_desk}", "agent: travel_desk, eval_history: true}"))


def test_concurrent_runs_on_a_busy_machine_end_soon_after_their_results(tmp_path):
    folders = [tmp_path / f"run{i}" for i in range(3)]
    for folder in folders:
        folder.mkdir()
        _prepare(folder, 208)
    env = {**os.environ, "FAKE_LLM_LATENCY": "0.05", "ADK_DISABLE_LOAD_DOTENV": "1", "PYTHONPATH": str(ROOT / "src")}
    stop = multiprocessing.Event()
    burner = multiprocessing.Process(target=_burn, args=(stop,))
    burner.start()
    printed: dict[int, float] = {}
    try:
        runs = [
            subprocess.Popen(
                [sys.executable, "-m", "adk_eval_gate", "run", "--config", "gate.yml", "--output", "out/results.json"],
                cwd=folder,
                env=env,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                text=True,
            )
            for folder in folders
        ]

        def watch(i: int, process: subprocess.Popen[str]) -> None:
            assert process.stdout is not None
            for line in process.stdout:
                if line.startswith("results written to"):
                    printed[i] = time.monotonic()

        watchers = [threading.Thread(target=watch, args=(i, p)) for i, p in enumerate(runs)]
        for watcher in watchers:
            watcher.start()
        ended = {}
        for i, process in enumerate(runs):
            process.wait(timeout=600)
            ended[i] = time.monotonic()
            watchers[i].join()
    finally:
        stop.set()
        burner.join()
    assert [p.returncode for p in runs] == [0, 0, 0]
    assert sorted(printed) == [0, 1, 2], "a run never printed its results"
    tails = {i: ended[i] - printed[i] for i in printed}
    assert max(tails.values()) < BOUND_SECONDS, f"seconds from results to exit: {tails}"
    for folder in folders:  # and each wrote its history, whole
        (history,) = (folder / "travel_desk" / ".adk" / "eval_history").glob("*.evalset_result.json")
        assert history.read_text().count('"eval_id"') >= 208
