"""The history writer: a child of the agent host (so google-adk is loaded already) that writes ADK eval history.

The run's process connects to it like a worker and, while the agent runs, forwards each run's actual invocations
(and each case's expected ones); the writer turns them into ADK's models at a low priority, taking only the CPU
the workers leave idle while they wait on the model. When the run is scored, only ADK's file remains to build
and write, alongside the run's own results file.
"""

from __future__ import annotations

import contextlib
import os
import socket
import sys
import traceback
from pathlib import Path

from adk_eval_gate.targets.host_start import pack, recv_blocking


def start(control: socket.socket, address: str) -> int:
    """Forks the writer; its pid. `control` is the host's own socket, closed in the child."""
    pid = os.fork()
    if pid:
        return pid
    code = 1
    try:
        control.close()
        os.nice(10)
        code = _serve(address)
    except BaseException:
        traceback.print_exc()
    finally:
        with contextlib.suppress(Exception):
            sys.stderr.flush()
        os._exit(code)


def _serve(address: str) -> int:
    from adk_eval_gate.targets.adk_history import (
        case_results_adapter,
        invocations_adapter,
        prevalidate,
        write_history_or_warn,
    )

    run = socket.socket(socket.AF_UNIX)
    run.connect(address)
    run.sendall(pack(("hello", os.getpid(), "historian")))
    case_results_adapter()
    invocations_adapter()
    held: dict[tuple, list] = {}
    while (message := recv_blocking(run)) is not None:
        if message[0] == "invocations":
            held[message[1]] = prevalidate(message[2])
        elif message[0] == "history":
            _, agent, folder, eval_set_id, results = message
            write_history_or_warn(agent, Path(folder), eval_set_id, results, held)
    return 0
