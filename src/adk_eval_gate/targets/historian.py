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
import socket
import sys
import traceback
from pathlib import Path

from adk_eval_gate.targets.host_messages import Hello, HoldInvocations, WriteHistory, pack_json, recv_from_run


def start(control: socket.socket, address: str) -> tuple[int, int]:
    """Forks the writer; its pid, and the write end of a pipe the host closes once the run has gone (the writer
    sees its end of the pipe become readable, at end of file). `control` is the host's own socket, closed in the
    child."""
    gone, run_gone = os.pipe()
    pid = os.fork()
    if pid:
        os.close(gone)
        return pid, run_gone
    code = 1
    try:
        os.close(run_gone)
        control.close()
        os.nice(10)
        code = _serve(address, gone)
    except BaseException:
        traceback.print_exc()
    finally:
        with contextlib.suppress(Exception):
            sys.stderr.flush()
        os._exit(code)


def _serve(address: str, gone: int) -> int:
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
        run.sendall(pack_json(Hello(os.getpid(), "historian")))
    except OSError:  # taken and closed at once: the run ended as this process called
        return 0
    case_results_adapter()
    invocations_adapter()
    held: dict[tuple[object, ...], list[object]] = {}
    while True:
        # The run closes this connection when it is done. Should that close be lost (a connection it never took
        # up), the host closing `gone` says the run has ended: what the run sent is read first, then nothing more
        # will come.
        readable, _, _ = select.select([run.fileno(), gone], [], [])
        if run.fileno() not in readable:
            break
        match recv_from_run(run):
            case None:
                break
            case HoldInvocations(key=key, invocations=invocations):
                held[key] = prevalidate(invocations)
            case WriteHistory() as message:
                write_history_or_warn(message.agent, Path(message.folder), message.eval_set_id, message.results, held)
            case _:  # nothing else is ever sent here
                pass
    return 0
