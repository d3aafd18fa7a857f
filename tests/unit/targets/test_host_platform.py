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
from adk_eval_gate.targets.host_start import fork_supported, os_thread_count
from adk_eval_gate.targets.host_timeouts import HostTimeouts
from tests.conftest import FAULTY_AGENT

linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="counts threads in /proc (Linux)")


@pytest.mark.parametrize(
    ("platform", "forks"),
    [("linux", True), ("darwin", False), ("win32", False), ("cygwin", False), ("freebsd14", False)],
)
def test_workers_are_forked_on_linux_only(platform, forks):
    """macOS's frameworks are not fork-safe (CPython spawns there by default), Windows has no fork."""
    assert fork_supported(platform) is forks


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
