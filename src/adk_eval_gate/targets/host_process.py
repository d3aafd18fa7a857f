"""The agent host process (see agent_host.py): imports google-adk and the agents, then forks workers on request,
reports each worker's exit, and writes ADK eval history; it exits when the run closes its control socket.

It never starts a thread or an event loop, so every fork happens from a single-threaded process. Where forking
is not known safe (host_start.worker_start_method), it spawns each worker as a fresh interpreter instead and
writes ADK eval history itself.
"""

from __future__ import annotations

import contextlib
import gc
import os
import pickle
import select
import signal
import socket
import subprocess
import sys
import time
import traceback
from pathlib import Path
from typing import TYPE_CHECKING

from adk_eval_gate.targets.host_messages import (
    Exited,
    Fork,
    Forked,
    Preload,
    Ready,
    WriteHistory,
    pack_json,
    recv_from_run,
)
from adk_eval_gate.targets.host_start import os_thread_count

if TYPE_CHECKING:
    from adk_eval_gate.targets.case_run import Target
    from adk_eval_gate.targets.runner import RunnerSettings

_REAP_POLL_SECONDS = 0.05  # how soon a worker's exit is reported while workers run (the run waits on it)


def main(fd: int) -> None:
    # Importing google-adk creates thousands of classes and almost no garbage: a collector walking them again and
    # again is a tenth of the import. Everything imported lives on, so it is frozen before the collector resumes.
    gc.disable()
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the run decides when to stop, and says so to the workers
    from adk_eval_gate.core.redaction import redact_standard_streams

    redact_standard_streams()
    control = socket.socket(fileno=fd)
    error = _import_runtime()  # before the agents are named: the run may still be reading its config
    message = recv_from_run(control)
    if not isinstance(message, Preload):
        return
    forks = message.start_method == "fork"
    control.sendall(pack_json(Ready(error or _preload(message.agents, forks, message.played))))
    gc.enable()
    _serve(control, message.children_grace_seconds, forks)
    # Every child is reaped and the history written: tearing down an interpreter holding all of google-adk takes
    # longer than the run's last step, and the run waits for this process to end.
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    os._exit(0)


def _import_runtime() -> str | None:
    from adk_eval_gate.core.errors import InputError
    from adk_eval_gate.targets import worker_process  # noqa: F401  (what every worker runs, imported once here)
    from adk_eval_gate.targets.adk_runtime import import_runtime

    try:
        import_runtime()
    except InputError as exc:
        return exc.render()
    except Exception as exc:  # google-adk is installed but does not import: said as one line by the run
        from adk_eval_gate.targets.case_run import one_line

        return f"importing google-adk failed: {one_line(exc)}"
    return None


def _preload(agents: tuple[tuple[str, str], ...], forks: bool, played: tuple[str, ...] = ()) -> str | None:
    from adk_eval_gate.core.errors import InputError
    from adk_eval_gate.targets.adk import AdkTarget
    from adk_eval_gate.targets.case_run import one_line

    try:
        for reference, base_dir in agents:
            AdkTarget(reference, Path(base_dir), played=reference in played).preload()
    except InputError as exc:
        return exc.render()
    except Exception as exc:
        return one_line(exc)
    from adk_eval_gate.targets.adk_runtime import cache_missing_optionals

    cache_missing_optionals()  # after the agents: an agent that needs one of them hears the usual ImportError
    threads = os_thread_count()
    if forks and threads > 1:  # the kernel's count: a native library's threads (grpc's) are invisible to `threading`
        return f"an agent started {threads - 1} thread(s) while importing, so worker processes cannot be forked from it"
    # Objects that exist now are shared with every worker: kept out of the collector's way, they stay shared
    # instead of being copied into each worker when a collection touches them.
    gc.freeze()
    return None


def _serve(control: socket.socket, grace: float, forks: bool) -> None:
    children: set[int] = set()
    spawned: dict[int, subprocess.Popen[bytes]] = {}  # held, so no Popen is collected and reaps behind our back
    historian: tuple[int, int] | None = None  # its pid, and the pipe whose closing tells it the run has gone
    while True:
        readable, _, _ = select.select([control], [], [], _REAP_POLL_SECONDS if children else None)
        _reap(control, children, block=False)
        if not readable:
            continue
        match recv_from_run(control):
            case None:
                break
            case Fork(target=target, count=count, settings=settings, address=address, writes_history=history):
                keep = [historian[1]] if historian is not None else []
                # A list, filled one fork at a time: `tuple(generator)` would fork while its half-filled tuple
                # (empty slots, tracked by the collector) exists, and a worker walking gc.get_objects() would crash.
                pids = [
                    _fork(control, target, settings, address, keep)
                    if forks
                    else _spawn(target, settings, address, spawned)
                    for _ in range(count)
                ]
                children.update(pids)
                control.sendall(pack_json(Forked(tuple(pids))))
                if history and historian is None and forks:  # spawning, the host writes the history itself
                    from adk_eval_gate.targets import historian as history_writer

                    historian = history_writer.start(control, address)
                    children.add(historian[0])
            case WriteHistory() as history_message:  # sent here only when the writer never connected
                _write_history(history_message)
            case _:  # nothing else is ever sent here
                pass
    if historian is not None:  # the run has gone: once nothing more arrives from it, nothing more will
        with contextlib.suppress(OSError):
            os.close(historian[1])
    _reap_all(control, children, grace, historian[0] if historian is not None else None)


def _reap_all(control: socket.socket, children: set[int], grace: float, historian: int | None) -> None:
    """Waits for every worker and the history writer once the run has gone; one still there after the grace
    (waiting on a connection nobody will use again) is killed rather than keeping the run waiting for ever, and
    named in the log: a run that ends late says which process held it."""
    deadline = time.monotonic() + grace
    while children and time.monotonic() < deadline:
        _reap(control, children, block=False)
        if children:
            time.sleep(0.01)
    for pid in children:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
        what = "the ADK eval history writer" if pid == historian else "agent worker"
        print(f"warning: killed {what} (pid {pid}), still running {grace:g} s after the run ended", file=sys.stderr)
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
            control.sendall(pack_json(Exited(pid, os.waitstatus_to_exitcode(status))))


def _fork(control: socket.socket, target: Target, settings: RunnerSettings, address: str, inherited: list[int]) -> int:
    """A worker; `inherited` are descriptors of the host's own it must not hold (the history writer's pipe, whose
    end would otherwise stay open in every worker)."""
    pid = os.fork()
    if pid:
        return pid
    code = 1
    try:
        control.close()
        for fd in inherited:
            os.close(fd)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        from adk_eval_gate.targets.worker_process import worker_main

        code = worker_main(target, address, settings)
    except BaseException:
        traceback.print_exc()
    finally:
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):
                stream.flush()
        os._exit(code)  # never return into the host's loop, nor run its exit handlers


def _spawn(target: Target, settings: RunnerSettings, address: str, spawned: dict[int, subprocess.Popen[bytes]]) -> int:
    """A worker as a fresh interpreter, where forking is not known safe: it imports google-adk and the agent
    itself, and reads what a forked worker would inherit from its standard input (worker_process.spawned_main)."""
    code = (
        f"import sys; sys.path[:] = {sys.path!r}; from adk_eval_gate.targets.worker_process import spawned_main; "
        "sys.exit(spawned_main())"
    )
    process = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE)
    assert process.stdin is not None
    with process.stdin:
        process.stdin.write(pickle.dumps((target, address, settings), protocol=pickle.HIGHEST_PROTOCOL))
    spawned[process.pid] = process
    return process.pid


def _write_history(message: WriteHistory) -> None:
    from adk_eval_gate.targets.adk_history import write_history_or_warn

    write_history_or_warn(message.agent, Path(message.folder), message.eval_set_id, message.results)
