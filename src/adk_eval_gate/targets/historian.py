"""The history writer: a child of the agent host (so google-adk is loaded already) that writes ADK eval history.

The run's process connects to it like a worker and, while the agent runs, forwards each run's actual invocations
(and each case's expected ones); the writer turns them into ADK's models at a low priority, taking only the CPU
the workers leave idle while they wait on the model. When the run is scored, only ADK's file remains to build
and write, alongside the run's own results file.
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import socket
import sys
import traceback
from pathlib import Path

from adk_eval_gate.targets.host_start import pack_json, recv_blocking

_IDLE_SECONDS = 1.0


RUN_GONE = signal.SIGUSR1  # from the host, once the run has closed its control socket (see _serve)
_run_gone = False


def start(control: socket.socket, address: str) -> int:
    """Forks the writer; its pid. `control` is the host's own socket, closed in the child."""
    # Blocked across the fork, so a RUN_GONE sent at once waits for the child's handler instead of killing it.
    signal.pthread_sigmask(signal.SIG_BLOCK, {RUN_GONE})
    pid = os.fork()
    if pid:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {RUN_GONE})
        return pid
    code = 1
    try:
        signal.signal(RUN_GONE, _on_run_gone)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {RUN_GONE})
        control.close()
        os.nice(10)
        code = _serve(address)
    except BaseException:
        traceback.print_exc()
    finally:
        with contextlib.suppress(Exception):
            sys.stderr.flush()
        os._exit(code)


def _on_run_gone(*_: object) -> None:
    global _run_gone
    _run_gone = True


def _serve(address: str) -> int:
    from adk_eval_gate.targets.adk_history import (
        case_results_adapter,
        invocations_adapter,
        prevalidate,
        write_history_or_warn,
    )

    run = socket.socket(socket.AF_UNIX)
    try:
        run.connect(address)
    except OSError:  # the run ended before it took this connection: it sent the history to the host instead
        return 0
    try:
        run.sendall(pack_json(("hello", os.getpid(), "historian")))
    except OSError:  # taken and closed at once: the run ended as this process called
        return 0
    case_results_adapter()
    invocations_adapter()
    held: dict[tuple, list] = {}
    while True:
        # The run closes this connection when it is done. Should that close be lost (a connection it never took
        # up), the host's RUN_GONE says the run has ended: once nothing more arrives, nothing more will.
        readable, _, _ = select.select([run], [], [], _IDLE_SECONDS)
        if not readable:
            if _run_gone:
                break
            continue
        if (message := recv_blocking(run)) is None:
            break
        if message[0] == "invocations":
            held[message[1]] = prevalidate(message[2])
        elif message[0] == "history":
            _, agent, folder, eval_set_id, results = message
            write_history_or_warn(agent, Path(folder), eval_set_id, results, held)
    return 0
