"""Where worker processes may be forked, and what counts as a thread when the agent host decides it may fork."""

from __future__ import annotations

import asyncio
import ctypes
import shutil
import sys
import threading
from pathlib import Path

import pytest

from adk_eval_gate.targets.agent_host import AgentHost
from adk_eval_gate.targets.host_start import fork_supported, host_supported, os_thread_count, worker_start_method
from adk_eval_gate.targets.host_timeouts import HostTimeouts
from tests.conftest import FAULTY_AGENT

linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="counts threads in /proc (Linux)")


@pytest.mark.parametrize(
    ("platform", "forks", "method", "hosted"),
    [
        ("linux", True, "fork", True),
        ("darwin", False, "spawn", True),
        ("freebsd14", False, "spawn", True),
        ("win32", False, "spawn", False),
        ("cygwin", False, "spawn", False),
    ],
)
def test_workers_are_forked_on_linux_only(platform, forks, method, hosted):
    """macOS's frameworks are not fork-safe (CPython spawns there by default): its workers are spawned. Windows
    has neither fork nor the host's Unix sockets: its agents run in the run's own process."""
    assert fork_supported(platform) is forks
    assert worker_start_method(platform) == method
    assert host_supported(platform) is hosted


def _native_thread(seconds: int) -> ctypes.c_ulong:
    """An OS thread `threading` knows nothing of: libc's sleep(seconds) as a pthread's start routine, as a C
    extension (grpc, a database driver) starts its own."""
    libc = ctypes.CDLL(None)
    libc.pthread_create.argtypes = [ctypes.POINTER(ctypes.c_ulong), ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p]
    thread = ctypes.c_ulong()
    assert libc.pthread_create(ctypes.byref(thread), None, ctypes.cast(libc.sleep, ctypes.c_void_p), seconds) == 0
    return thread


def _join(thread: ctypes.c_ulong) -> None:
    libc = ctypes.CDLL(None)
    libc.pthread_join.argtypes = [ctypes.c_ulong, ctypes.c_void_p]
    assert libc.pthread_join(thread, None) == 0


@linux_only
def test_a_native_thread_is_counted_though_threading_never_sees_it():
    before, python_before = os_thread_count(), threading.active_count()
    thread = _native_thread(1)
    try:
        assert os_thread_count() == before + 1
        assert threading.active_count() == python_before  # what the guard used to count
    finally:
        _join(thread)
    assert os_thread_count() == before


@linux_only
def test_the_host_refuses_to_fork_from_an_agent_that_started_a_native_thread(tmp_path):
    """An agent whose import starts an OS thread (here through ctypes, as grpc's channel would): the host says
    so instead of forking workers from a process with a thread in it, and the run keeps the agent in its own."""
    agent = tmp_path / "threaded"
    shutil.copytree(FAULTY_AGENT, agent, ignore=shutil.ignore_patterns("__pycache__"))
    starts_a_thread = (
        "import ctypes\n"
        "_libc = ctypes.CDLL(None)\n"
        "_libc.pthread_create.argtypes = [ctypes.POINTER(ctypes.c_ulong), ctypes.c_void_p, ctypes.c_void_p, "
        "ctypes.c_void_p]\n"
        "_THREAD = ctypes.c_ulong()\n"
        "_libc.pthread_create(ctypes.byref(_THREAD), None, ctypes.cast(_libc.sleep, ctypes.c_void_p), 3600)\n"
    )
    (agent / "agent.py").write_text((agent / "agent.py").read_text() + starts_a_thread)

    async def ask() -> str | None:
        host = AgentHost.start([("threaded", Path(tmp_path))], HostTimeouts())
        try:
            return await host.preload_error()
        finally:
            await host.release()
            await asyncio.get_running_loop().run_in_executor(None, host.wait)

    error = asyncio.run(ask())
    assert error == "an agent started 1 thread(s) while importing, so worker processes cannot be forked from it"


@linux_only
def test_the_host_forks_from_an_agent_that_started_no_thread(tmp_path):
    """The same agent without its thread: the host is ready (the check above is not a refusal of everything)."""
    shutil.copytree(FAULTY_AGENT, tmp_path / "faulty", ignore=shutil.ignore_patterns("__pycache__"))

    async def ask() -> str | None:
        host = AgentHost.start([("faulty", Path(tmp_path))], HostTimeouts())
        try:
            return await host.preload_error()
        finally:
            await host.release()
            await asyncio.get_running_loop().run_in_executor(None, host.wait)

    assert asyncio.run(ask()) is None


def _through_workers(tmp_path, prompts: dict[str, str], start_method: str) -> dict[str, tuple[str | None, str]]:
    """The faulty agent's cases through two workers the host starts as `start_method` says: each case's error
    (None) and its answer."""
    from adk_eval_gate.evalsets.adk_eval_schema import EvalCase
    from adk_eval_gate.targets.adk import AdkTarget
    from adk_eval_gate.targets.runner import Job, RunnerSettings
    from adk_eval_gate.targets.workers import WorkerHooks, run_jobs_in_workers

    shutil.copytree(FAULTY_AGENT, tmp_path / "faulty", ignore=shutil.ignore_patterns("__pycache__"))
    target = AdkTarget("faulty", Path(tmp_path))
    jobs = [
        Job(
            target,
            "s",
            EvalCase.model_validate(
                {
                    "eval_id": eval_id,
                    "conversation": [{"user_content": {"role": "user", "parts": [{"text": prompt}]}}],
                    "session_input": {"app_name": "faulty", "user_id": "u", "state": {}},
                }
            ),
            0,
        )
        for eval_id, prompt in prompts.items()
    ]

    async def run() -> list:
        host = AgentHost.start([("faulty", Path(tmp_path))], HostTimeouts(), start_method)
        try:
            runs, stopped = await run_jobs_in_workers(
                host, target, jobs, RunnerSettings(concurrency=2, retries=0), 2, WorkerHooks(quiet=True)
            )
            assert stopped is None
            return runs
        finally:
            await host.release()
            await asyncio.get_running_loop().run_in_executor(None, host.wait)

    return {
        run.eval_id: (run.error, run.invocations[-1].final_response.parts[0].text if run.ok else "")
        for run in asyncio.run(run())
    }


def test_where_fork_is_not_known_safe_workers_are_spawned_and_a_dead_one_still_costs_one_case(tmp_path):
    """The spawn path, as macOS takes it, run here on purpose: each worker is a fresh interpreter (its command
    line says so), the agent answers as it does in a forked worker, and a worker that dies is replaced."""
    prompts = {"first": "how were you started", "dies": "die now", "second": "how were you started"}
    got = _through_workers(tmp_path, prompts, "spawn")
    assert got == {
        "first": (None, "spawned"),
        "dies": ("worker process died (exit code 3) while running this case", ""),
        "second": (None, "spawned"),
    }


def test_on_linux_workers_are_forked_from_the_warm_host(tmp_path):
    got = _through_workers(tmp_path, {"first": "how were you started"}, "fork")
    assert got == {"first": (None, "forked")}
