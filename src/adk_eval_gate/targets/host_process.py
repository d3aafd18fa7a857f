"""The agent host process (see agent_host.py): imports google-adk and the agents, then forks workers on request,
reports each worker's exit, and writes ADK eval history; it exits when the run closes its control socket.

It never starts a thread or an event loop, so every fork happens from a single-threaded process.
"""

from __future__ import annotations

import contextlib
import gc
import os
import select
import signal
import socket
import sys
import threading
import time
import traceback
from pathlib import Path
from typing import Any

from adk_eval_gate.targets.host_start import pack_json, recv_blocking

_CHILDREN_GRACE_SECONDS = 300.0


def main(fd: int) -> None:
    # Importing google-adk creates thousands of classes and almost no garbage: a collector walking them again and
    # again is a tenth of the import. Everything imported lives on, so it is frozen before the collector resumes.
    gc.disable()
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the run decides when to stop, and says so to the workers
    from adk_eval_gate.core.redaction import redact_standard_streams

    redact_standard_streams()
    control = socket.socket(fileno=fd)
    error = _import_runtime()  # before the agents are named: the run may still be reading its config
    message = recv_blocking(control)
    if message is None:
        return
    control.sendall(pack_json(("ready", error or _preload(message[1]))))
    gc.enable()
    _serve(control)
    # Every child is reaped and the history written: tearing down an interpreter holding all of google-adk takes
    # longer than the run's last step, and the run waits for this process to end.
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    os._exit(0)


def _import_runtime() -> str | None:
    from adk_eval_gate.core.errors import InputError
    from adk_eval_gate.targets import workers  # noqa: F401  (what every worker runs, imported once here)
    from adk_eval_gate.targets.adk_runtime import import_runtime

    try:
        import_runtime()
    except InputError as exc:
        return exc.render()
    except Exception as exc:  # google-adk is installed but does not import: said as one line by the run
        from adk_eval_gate.targets.base import one_line

        return f"importing google-adk failed: {one_line(exc)}"
    return None


def _preload(agents: list[tuple[str, str]]) -> str | None:
    from adk_eval_gate.core.errors import InputError
    from adk_eval_gate.targets.adk import AdkTarget
    from adk_eval_gate.targets.base import one_line

    try:
        for reference, base_dir in agents:
            AdkTarget(reference, Path(base_dir)).preload()
    except InputError as exc:
        return exc.render()
    except Exception as exc:
        return one_line(exc)
    from adk_eval_gate.targets.adk_runtime import cache_missing_optionals

    cache_missing_optionals()  # after the agents: an agent that needs one of them hears the usual ImportError
    if threading.active_count() > 1:
        return "an agent started a thread while importing, so worker processes cannot be forked from it"
    # Objects that exist now are shared with every worker: kept out of the collector's way, they stay shared
    # instead of being copied into each worker when a collection touches them.
    gc.freeze()
    return None


def _serve(control: socket.socket) -> None:
    children: set[int] = set()
    historian: int | None = None
    while True:
        readable, _, _ = select.select([control], [], [], 0.05 if children else None)
        _reap(control, children, block=False)
        if not readable:
            continue
        message = recv_blocking(control)
        if message is None:
            break
        if message[0] == "fork":
            _, target, count, settings, address, history = message
            pids = [_fork(control, target, settings, address) for _ in range(count)]
            children.update(pids)
            control.sendall(pack_json(("forked", pids)))
            if history and historian is None:
                from adk_eval_gate.targets import historian as history_writer

                historian = history_writer.start(control, address)
                children.add(historian)
        elif message[0] == "history":  # sent here only when the writer never connected
            _write_history(*message[1:])
    if historian is not None and historian in children:
        from adk_eval_gate.targets.historian import RUN_GONE

        with contextlib.suppress(OSError):
            os.kill(historian, RUN_GONE)
    _reap_all(control, children)


def _reap_all(control: socket.socket, children: set[int]) -> None:
    """Waits for every worker and the history writer once the run has gone; one still there after five minutes
    (waiting on a connection nobody will use again) is killed rather than keeping the run waiting for ever."""
    deadline = time.monotonic() + _CHILDREN_GRACE_SECONDS
    while children and time.monotonic() < deadline:
        _reap(control, children, block=False)
        if children:
            time.sleep(0.01)
    for pid in children:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
    _reap(control, children, block=True)


def _reap(control: socket.socket, children: set[int], *, block: bool) -> None:
    while children:
        try:
            pid, status = os.waitpid(-1, 0 if block else os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        children.discard(pid)
        with contextlib.suppress(OSError):  # the run may have closed its end: nobody is asking any more
            control.sendall(pack_json(("exited", pid, os.waitstatus_to_exitcode(status))))


def _fork(control: socket.socket, target: Any, settings: Any, address: str) -> int:
    pid = os.fork()
    if pid:
        return pid
    code = 1
    try:
        control.close()
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        from adk_eval_gate.targets.workers import worker_main

        code = worker_main(target, address, settings)
    except BaseException:
        traceback.print_exc()
    finally:
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):
                stream.flush()
        os._exit(code)  # never return into the host's loop, nor run its exit handlers


def _write_history(agent: str, folder: str, eval_set_id: str, results: list[dict]) -> None:
    from adk_eval_gate.targets.adk_history import write_history_or_warn

    write_history_or_warn(agent, Path(folder), eval_set_id, results)
