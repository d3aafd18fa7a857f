"""The runner: bounded concurrency, transient-only retries, timeouts, the job time limit, signals, workers."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

from adk_eval_gate.evalsets.adk_eval_schema import EvalCase
from adk_eval_gate.run.pipeline import run_plan
from adk_eval_gate.run.plan import build_plan
from adk_eval_gate.targets.case_run import CaseRun, TargetError, TransientTargetError
from adk_eval_gate.targets.runner import Job, Progress, RunnerSettings, run_jobs
from tests.integration.targets.test_target_adk import faulty_suite


class ScriptedTarget:
    """A test double for the Target protocol: each case id names its behaviour."""

    kind = "scripted"

    def __init__(self) -> None:
        self.in_flight = self.peak = 0
        self.calls: dict[str, int] = {}

    async def start(self) -> None: ...

    async def aclose(self) -> None: ...

    async def run_case(self, eval_set_id: str, case: EvalCase, run: int) -> CaseRun:
        self.calls[case.eval_id] = self.calls.get(case.eval_id, 0) + 1
        self.in_flight += 1
        self.peak = max(self.peak, self.in_flight)
        try:
            await asyncio.sleep(0.02)
            if case.eval_id.startswith("transient") and self.calls[case.eval_id] < 3:
                raise TransientTargetError("HTTP 503")
            if case.eval_id.startswith("fatal"):
                raise TargetError("HTTP 400: bad request")
            if case.eval_id.startswith("slow"):
                await asyncio.sleep(30)
            return CaseRun(eval_set_id, case.eval_id, run, ())
        finally:
            self.in_flight -= 1


def jobs_for(target, *ids: str) -> list[Job]:
    return [
        Job(
            target,
            "s",
            EvalCase.model_validate({"eval_id": i, "conversation": [{"user_content": {"parts": [{"text": "x"}]}}]}),
            0,
        )
        for i in ids
    ]


def test_concurrency_is_bounded_and_order_is_kept():
    target = ScriptedTarget()
    runs, stopped = asyncio.run(
        run_jobs(jobs_for(target, *(f"c{i}" for i in range(40))), RunnerSettings(concurrency=5), quiet=True)
    )
    assert target.peak == 5 and stopped is None
    assert [r.eval_id for r in runs] == [f"c{i}" for i in range(40)]


def test_only_transient_errors_are_retried():
    target = ScriptedTarget()
    settings = RunnerSettings(retries=2, backoff=0.01)
    runs, _ = asyncio.run(run_jobs(jobs_for(target, "transient-a", "fatal-b"), settings, quiet=True))
    assert runs[0].ok and target.calls["transient-a"] == 3
    assert runs[1].error == "HTTP 400: bad request" and target.calls["fatal-b"] == 1


def test_job_time_limit_keeps_finished_runs():
    target = ScriptedTarget()
    settings = RunnerSettings(job_timeout=0.5, concurrency=4)
    runs, stopped = asyncio.run(run_jobs(jobs_for(target, "a", "slow-b", "c", "slow-d"), settings, quiet=True))
    assert stopped == "job time limit of 0.5s reached"
    assert [r.ok for r in runs] == [True, False, True, False]
    assert runs[1].error == "not run: job time limit of 0.5s reached"


def test_progress_lines_fit_ci_logs(capsys):
    class Clock:
        now = 100.0

    progress = Progress(4, quiet=False, clock=lambda: Clock.now)
    for i in range(4):
        Clock.now += 1
        progress.update(CaseRun("s", f"c{i}", 0, () if i != 2 else None, None if i != 2 else "boom"))
    lines = capsys.readouterr().err.strip().splitlines()
    assert lines[-1] == "[adk-eval-gate] 4/4 runs done, 1 errored, 4.0s elapsed, ETA 0s"
    assert lines[0].startswith("[adk-eval-gate] 1/4 runs done, 0 errored, 1.0s elapsed, ETA 3s")


def test_sigterm_writes_finished_results_and_says_what_did_not_run(tmp_path):
    prompts = {f"ok{i}": "hello" for i in range(3)} | {f"stuck{i}": "please hang" for i in range(3)}
    config = faulty_suite(tmp_path, prompts, run="run: {timeout: 300, workers: 1}\n")
    out = tmp_path / "results.json"
    process = subprocess.Popen(
        [sys.executable, "-m", "adk_eval_gate", "run", "--config", str(config), "--output", str(out)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ},
    )
    # Wait for the event, not for a guess at how long it takes: the progress line saying the three quick cases
    # finished (the hung ones wait for a 300 s timeout).
    seen = []
    while not any("3/6 runs done" in line for line in seen):
        line = process.stderr.readline()
        assert line, f"the run ended before the quick cases finished: {''.join(seen)}"
        seen.append(line)
    assert process.poll() is None
    process.send_signal(signal.SIGTERM)
    _, rest = process.communicate(timeout=60)
    stderr = "".join(seen) + rest
    assert process.returncode == 1, stderr
    data = json.loads(out.read_text())
    assert data["interrupted"] is True and data["stop_reason"] == "interrupted"
    statuses = {c["eval_id"]: (c["status"], c["reason"]) for c in data["eval_sets"][0]["cases"]}
    assert all(statuses[f"ok{i}"][0] == "passed" for i in range(3))
    assert all(statuses[f"stuck{i}"] == ("error", "not run: interrupted") for i in range(3))
    assert "stopped early (interrupted)" in stderr


def _scores(results):
    return {
        c.eval_id: (c.status, {n: m.score for n, m in c.metrics.items()}) for s in results.eval_sets for c in s.cases
    }


def test_worker_processes_give_the_same_results(example):
    config = example / "eval-gate.yml"
    single = run_plan(build_plan(config), quiet=True)
    config.write_text("run: {workers: 2}\n" + config.read_text())
    assert "workers: 2" in config.read_text()
    pooled = run_plan(build_plan(config), quiet=True)
    assert _scores(pooled) == _scores(single)

    def answers(results):
        return [[inv["final_response"] for inv in c.runs[0].actual_invocations] for c in results.eval_sets[0].cases]

    assert answers(pooled) == answers(single)


def test_worker_failures_are_isolated(tmp_path):
    prompts = {"ok": "hello", "boom": "please crash", "stuck": "please hang", "ok2": "bye"}
    config = faulty_suite(tmp_path, prompts, run="run: {timeout: 2, retries: 0, workers: 2}\n")
    got = {c.eval_id: (c.status, c.reason) for c in run_plan(build_plan(config), quiet=True).eval_sets[0].cases}
    assert got == {
        "ok": ("passed", None),
        "ok2": ("passed", None),
        "boom": ("error", "RuntimeError: model exploded"),
        "stuck": ("error", "timed out after 2s"),
    }


def test_a_worker_that_dies_costs_its_case_not_the_run(tmp_path):
    """An agent that ends its own process on one case (os._exit, SIGKILL): that case is an error saying how the
    worker ended; the case the worker held queued behind it, and every other, runs in the worker forked in its
    place or the surviving one, and the run is not interrupted."""
    prompts = {"dies": "die now", "ok0": "hello", "killed": "kill me"} | {f"ok{i}": "hello" for i in range(1, 6)}
    config = faulty_suite(tmp_path, prompts, run="run: {workers: 2, concurrency: 2, retries: 0}\n")
    results = run_plan(build_plan(config), quiet=True)
    got = {c.eval_id: (c.status, c.reason) for c in results.eval_sets[0].cases}
    assert got.pop("dies") == ("error", "worker process died (exit code 3) while running this case")
    assert got.pop("killed") == ("error", "worker process died (killed by SIGKILL) while running this case")
    assert got == {f"ok{i}": ("passed", None) for i in range(6)}
    assert results.interrupted is False and results.stop_reason is None


def test_a_dying_agent_never_takes_the_gate_down_even_with_threads_running_here(tmp_path):
    """Workers are forked by the agent host, never from this process, so threads running here change nothing."""
    import threading

    release = threading.Event()
    thread = threading.Thread(target=release.wait, daemon=True)
    thread.start()
    try:
        prompts = {"ok1": "hello", "ok2": "hello", "dies": "die now"}
        config = faulty_suite(tmp_path, prompts, run="run: {workers: 2, concurrency: 2}\n")
        got = {c.eval_id: c.status for c in run_plan(build_plan(config), quiet=True).eval_sets[0].cases}
        assert got["dies"] == "error"  # and this test process is still alive to say so
    finally:
        release.set()


def test_progress_is_printed_for_real_runs(example, capsys):
    from adk_eval_gate.commands.main import main

    main(["run", "--config", str(example / "eval-gate.yml"), "--output", str(Path(example) / "r.json")])
    # two runs of each of the six cases (num_runs: {min: 2, max: 10}); none looks worse than the baseline
    assert "[adk-eval-gate] 12/12 runs done, 0 errored" in capsys.readouterr().err


def test_worker_processes_leave_google_adk_out_of_this_process(example, tmp_path):
    """The agent host imports google-adk once and forks the workers from it: the run's own process never does."""
    from .test_replay import loaded_after_run

    config = example / "eval-gate.yml"
    config.write_text("run: {workers: 2}\n" + config.read_text())
    loaded = loaded_after_run(config, tmp_path / "r.json")
    assert not {m for m in loaded if m.startswith("google.adk")}
    assert json.loads((tmp_path / "r.json").read_text())["summary"]["passed"] == 4


def test_what_the_agents_libraries_log_is_collapsed_with_a_count(tmp_path):
    """ADK warns on every call of a model that reports no token usage; across worker processes that is the line
    once, then one closing line with how often it came."""
    config = faulty_suite(tmp_path, {f"ok{i}": "hello" for i in range(6)}, run="run: {workers: 2, concurrency: 2}\n")
    done = subprocess.run(
        [sys.executable, "-m", "adk_eval_gate", "run", "--config", str(config), "--output", str(tmp_path / "r.json")],
        capture_output=True,
        text=True,
        timeout=300,
    )
    warning = "Skipping missing token usage metadata for agent faulty and model scripted-faulty"
    assert [line for line in done.stderr.splitlines() if warning in line] == [warning, f"{warning} (6 times in all)"]


def test_repeated_log_texts_are_counted_and_summarised_once():
    import io

    from adk_eval_gate.targets.agent_logs import RepeatCollapser

    out = io.StringIO()
    logs = RepeatCollapser(out)
    for text in ["a", "b", "a", "a\ntraceback"]:
        logs.add(text)
    logs.add("a", 3)  # a worker's count of the repeats it did not send
    logs.summarise()
    assert out.getvalue().splitlines() == ["a", "b", "a", "traceback", "a (5 times in all)"]


def test_a_history_writer_whose_connection_the_run_never_closed_still_ends(example, monkeypatch):
    """A connection the run never took up (a short run ending as the history writer calls) is never closed by the
    run: the host tells the writer that the run has gone, so it writes what it received and ends, and the run
    does not wait on it (for the host's five-minute backstop: how long it waits is bench/history_writer_end.py's
    measurement, not a bound here)."""
    from adk_eval_gate.targets import agent_host

    lost = []
    release = agent_host.AgentHost.release

    async def release_losing_the_writer(self):
        if self._historian is not None:
            lost.append(self._historian)
            self._accepted = [w for w in self._accepted if w is not self._historian]
            self._historian = None
        await release(self)

    monkeypatch.setattr(agent_host.AgentHost, "release", release_losing_the_writer)
    config = example / "eval-gate.yml"
    text = config.read_text().replace("agent: hello_world}", "agent: hello_world, eval_history: true}")
    config.write_text("run: {workers: 2}\n" + text)
    results = run_plan(build_plan(config), quiet=True)
    assert lost, "the history writer never connected: nothing was tested"
    (history,) = (example / "hello_world" / ".adk" / "eval_history").glob("*.evalset_result.json")
    written = {c["eval_id"] for c in json.loads(history.read_text())["eval_case_results"]}
    assert written == {c.eval_id for c in results.eval_sets[0].cases}


def test_workers_together_never_hold_more_cases_than_the_concurrency(tmp_path, monkeypatch):
    """Three workers at concurrency 4: shares of 2, 1, 1, not 2 each (a user's concurrency may be a rate limit)."""
    inflight = tmp_path / "inflight"
    inflight.mkdir()
    monkeypatch.setenv("FAULTY_INFLIGHT_DIR", str(inflight))
    config = faulty_suite(tmp_path, {f"c{i}": "count me" for i in range(12)}, run="run: {workers: 3, concurrency: 4}\n")
    results = run_plan(build_plan(config), quiet=True)
    assert {c.status for c in results.eval_sets[0].cases} == {"passed"}
    counts = [int(line) for line in (tmp_path / "inflight.log").read_text().split()]
    assert len(counts) == 12 and max(counts) <= 4
    assert max(counts) >= 3  # the limit was reached, so a larger one would have shown


def test_worker_shares_add_up_to_the_concurrency():
    from adk_eval_gate.targets.workers import shares

    for concurrency in range(1, 40):
        for workers in range(1, 10):
            got = shares(concurrency, workers)
            assert sum(got) == concurrency and min(got) >= 1 and max(got) - min(got) <= 1
            assert len(got) == min(workers, concurrency)


def test_two_agents_share_one_concurrency(tmp_path, monkeypatch):
    """`run.concurrency` is the run's: two agents' worker pools together hold no more cases than it."""
    inflight = tmp_path / "inflight"
    inflight.mkdir()
    monkeypatch.setenv("FAULTY_INFLIGHT_DIR", str(inflight))
    config = faulty_suite(tmp_path, {f"c{i}": "count me" for i in range(8)}, run="run: {workers: 2, concurrency: 4}\n")
    text = config.read_text()
    agent = text[text.index("  - name: faulty") :]
    config.write_text(text + agent.replace("name: faulty", "name: faulty_twin"))
    results = run_plan(build_plan(config), quiet=True)
    assert [s.summary.passed for s in results.eval_sets] == [8, 8]
    counts = [int(line) for line in (tmp_path / "inflight.log").read_text().split()]
    assert len(counts) == 16 and 3 <= max(counts) <= 4


def test_pools_split_the_concurrency_where_the_jobs_are():
    from adk_eval_gate.run.dispatch import split_concurrency

    assert split_concurrency(16, [208]) == [16]
    assert split_concurrency(16, [100, 100]) == [8, 8]
    assert split_concurrency(16, [3, 3, 3]) == [3, 3, 3]  # never more slots than jobs
    assert split_concurrency(2, [5, 5, 5]) == [1, 1, 1]  # more pools than slots: one each
    for concurrency in range(1, 20):
        for sizes in ([1], [7, 1], [50, 5, 2], [4, 4, 4, 4]):
            parts = split_concurrency(concurrency, sizes)
            assert sum(parts) <= max(concurrency, len(sizes)) and min(parts) >= 1


def test_an_agent_that_fails_to_import_is_refused_in_one_line_without_waiting_on_its_host(example, tmp_path):
    """The host that was to run it is told the run is over, so neither `run` nor `ci` waits on it."""
    (example / "hello_world" / "agent.py").write_text("raise RuntimeError('broken on import')\n")
    config = example / "eval-gate.yml"
    config.write_text("run: {workers: 2}\n" + config.read_text())
    for command in (["run", "--output", str(tmp_path / "r.json")], ["ci", "--output-dir", str(tmp_path / "out")]):
        env = {k: v for k, v in os.environ.items() if not k.startswith("GITHUB_")}
        done = subprocess.run(
            [sys.executable, "-m", "adk_eval_gate", *command, "--config", str(config)],
            capture_output=True,
            text=True,
            timeout=120,  # the host's own wait would be ten minutes
            env=env,
        )
        assert done.returncode == 2, done.stderr
        assert "broken on import" in done.stderr and "Traceback" not in done.stderr


def test_a_worker_that_writes_what_the_run_cannot_read_costs_its_case_not_the_run(tmp_path):
    """The agent's code writes a frame that is not a message to its worker's connection: that worker is stopped,
    the case it was running is an error saying why, and a worker forked in its place runs the rest."""
    prompts = {"nonsense": "speak nonsense", **{f"ok{i}": "hello" for i in range(5)}}
    # Concurrency 1: one worker, so only the one forked in its place can run the other cases.
    config = faulty_suite(tmp_path, prompts, run="run: {workers: 2, concurrency: 1, retries: 0}\n")
    results = run_plan(build_plan(config), quiet=True)
    got = {c.eval_id: (c.status, c.reason) for c in results.eval_sets[0].cases}
    assert got.pop("nonsense") == (
        "error",
        "worker process sent a message the run cannot read (not JSON), so it was stopped while running this case",
    )
    assert got == {f"ok{i}": ("passed", None) for i in range(5)}
    assert results.interrupted is False
