"""The history writer: a child of the agent host (so google-adk is loaded already) that writes ADK eval history.

The run's process connects to it like a worker and, while the agent runs, forwards each run's actual invocations
(and each case's expected ones); the writer turns them into ADK's models at a low priority, taking only the CPU
the workers leave idle while they wait on the model. When the run is scored, only ADK's file remains to build
and write, alongside the run's own results file.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import select
import socket
import sys
import traceback
from pathlib import Path

from adk_eval_gate.targets.host_messages import HEADER, Hello, HoldInvocations, WriteHistory, pack_json


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
    inbox = _Inbox(run)
    while True:
        message = inbox.next()
        if message is None:
            if inbox.ended:
                break
            # Should the run's close be lost (a connection it never took up), the host closing `gone` says the
            # run has ended: what it sent is read first, then nothing more will come.
            readable, _, _ = select.select([run.fileno(), gone], [], [])
            if run.fileno() not in readable:
                break
            inbox.read_available()
            continue
        inbox.read_available()  # what else arrived is taken before the slow work: the run never waits on it
        match message:
            case HoldInvocations(key=key, invocations=invocations):
                held[key] = prevalidate(invocations)
            case WriteHistory() as history:
                write_history_or_warn(history.agent, Path(history.folder), history.eval_set_id, history.results, held)
            case _:  # nothing else is ever sent here
                pass
    return 0


class _Inbox:
    """The run's messages, read as soon as they arrive rather than one per piece of work done: the run waits until
    every byte it sent is taken (agent_host.release), so a writer working at low priority on a busy machine must
    not hold the run's end open while it works."""

    def __init__(self, run: socket.socket) -> None:
        self._run = run
        self._data = bytearray()
        self._start = 0  # where the next message begins in `_data`
        self.ended = False  # the run closed the connection: what is in `_data` is all there will be

    def read_available(self) -> None:
        while not self.ended:
            try:
                chunk = self._run.recv(1 << 20, socket.MSG_DONTWAIT)
            except BlockingIOError:
                return
            except OSError:  # reset: the run has gone all the same
                chunk = b""
            if not chunk:
                self.ended = True
            self._data += chunk

    def next(self) -> object | None:
        """The next whole message, or None (a message the run never finished sending is never taken)."""
        start = self._start
        if len(self._data) < start + HEADER.size:
            return None
        end = start + HEADER.size + HEADER.unpack_from(self._data, start)[0]
        if len(self._data) < end:
            return None
        message: object = pickle.loads(self._data[start + HEADER.size : end])
        self._start = end
        if end > len(self._data) // 2:  # what was taken goes, not message by message (a long backlog)
            del self._data[:end]
            self._start = 0
        return message
