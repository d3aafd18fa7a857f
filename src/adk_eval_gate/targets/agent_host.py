"""The run's handle on its agent host: one process, started as early as the run knows its agents, that imports
google-adk and every `adk` agent once and then forks each worker process from that warm state.

Why a separate process: forking the run's own process is unsafe once it has threads or an event loop, and
spawning workers instead makes each of them import google-adk again (about 1.5 s of CPU apiece). The host has
neither threads nor a loop when it forks, so workers start in milliseconds whatever their number, share the
imported code's memory, and the run's own process never imports google-adk at all. The host also writes ADK's
eval history at the end, since it has google-adk loaded, while this process writes the results file.

Messages on both channels (host control, each worker's connection): see host_start.py (JSON towards the run).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import pickle
import socket
import subprocess
from pathlib import Path
from typing import Any

from adk_eval_gate.core.held_tokens import held
from adk_eval_gate.targets.host_start import (
    _HEADER,
    fork_supported,
    load_agent_dotenv,
    pack,
    spawn,
    take_early,
    unpack_json,
)


async def read_message(reader: asyncio.StreamReader) -> Any | None:
    """The next message from the run (read by a worker), or None once the run has gone."""
    try:
        size = _HEADER.unpack(await reader.readexactly(_HEADER.size))[0]
        return pickle.loads(await reader.readexactly(size))
    except (asyncio.IncompleteReadError, ConnectionError):
        return None


async def read_reply(reader: asyncio.StreamReader) -> tuple | None:
    """The next message from the host or a worker (read by the run): JSON, never a pickle (host_start.py); None
    once the other side has gone or sent something else."""
    try:
        size = _HEADER.unpack(await reader.readexactly(_HEADER.size))[0]
        return unpack_json(await reader.readexactly(size))
    except (asyncio.IncompleteReadError, ConnectionError):
        return None


class AgentHost:
    def __init__(self, process: subprocess.Popen, control: socket.socket, workdir: Path) -> None:
        self._process = process
        self._control = control
        self._workdir = workdir
        self.address = str(workdir / "w")
        self.writes_history = False  # set when the run will ask for ADK eval history: the host prepares for it
        self.agents: list[tuple[str, str]] = []  # what `preload` named: a run takes a warm host only for these
        self._writer: asyncio.StreamWriter | None = None
        self._ready: asyncio.Future | None = None
        self._forked: asyncio.Queue | None = None
        self._exits: dict[int, int] = {}
        self._exit_events: dict[int, asyncio.Event] = {}
        self._connections: dict[int, asyncio.Future] = {}
        self._tasks: list[asyncio.Task] = []
        self._server: asyncio.AbstractServer | None = None
        self._historian: asyncio.StreamWriter | None = None  # the history writer (historian.py), once connected
        self.held: set[tuple] = set()  # invocations forwarded to it
        self._accepted: list[asyncio.StreamWriter] = []  # every connection, closed by `release` whatever its state
        self._released = False
        self._fork_lock: asyncio.Lock | None = None  # one fork request answered at a time: replies carry no name
        self._gone: str | None = None  # why the host can fork no more, once it has gone

    @classmethod
    def start(cls, agents: list[tuple[str, Path]] | None = None) -> AgentHost:
        """Starts the host, which imports google-adk's runtime at once, then `agents` (reference, base directory)
        once they are named here or later by `preload`. This returns without waiting, so the imports overlap
        this process's own start-up."""
        host = cls(*spawn())
        if agents is not None:
            host.preload(agents)
        return host

    def preload(self, agents: list[tuple[str, Path]]) -> None:
        """Names the agents the host imports (and whose `.env` this process loads for the judges)."""
        for reference, base_dir in agents:
            load_agent_dotenv(reference, base_dir)
        self.agents = _named(agents)
        with contextlib.suppress(OSError):  # a host that died importing google-adk: preload_error says so
            self._control.sendall(pack(("preload", [(reference, str(base_dir)) for reference, base_dir in agents])))

    def discard(self) -> None:
        """A host started for a config that turned out to run no `adk` agent here."""
        self._control.close()
        self._process.kill()
        self.wait()

    async def _attach(self) -> None:
        if self._writer is not None:
            return
        loop = asyncio.get_running_loop()
        self._ready, self._forked, self._fork_lock = loop.create_future(), asyncio.Queue(), asyncio.Lock()
        reader, self._writer = await asyncio.open_unix_connection(sock=self._control)
        self._server = await asyncio.start_unix_server(self._on_worker, path=self.address)
        self._tasks = [asyncio.ensure_future(self._listen(reader))]

    async def _listen(self, reader: asyncio.StreamReader) -> None:
        while (message := await read_reply(reader)) is not None:
            kind = message[0]
            if kind == "ready":
                self._ready.set_result(message[1])
            elif kind == "forked":
                self._forked.put_nowait(message[1])
            elif kind == "exited":
                self._exits[message[1]] = message[2]
                self._exit_event(message[1]).set()
        code = self._process.poll()
        gone = "the agent host process exited" + (f" (exit code {code})" if code is not None else "")
        if not self._ready.done():
            self._ready.set_result(gone)
        self._gone = gone
        self._forked.put_nowait(gone)
        for event in self._exit_events.values():
            event.set()

    async def _on_worker(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        # A connection the run has not taken when it ends must still be closed: the process at its other end (the
        # history writer of a short run) would otherwise wait on it, and the host on that process, for ever.
        self._accepted.append(writer)
        if self._released:
            writer.close()
            return
        try:
            hello = await read_reply(reader)
        except asyncio.CancelledError:
            writer.close()
            raise
        if hello is None:
            writer.close()
            return
        if hello[2:] == ("historian",):
            self._historian = writer
            return
        waiter = self._connections.setdefault(hello[1], asyncio.get_running_loop().create_future())
        if not waiter.done():
            waiter.set_result((reader, writer))

    def _exit_event(self, pid: int) -> asyncio.Event:
        return self._exit_events.setdefault(pid, asyncio.Event())

    async def preload_error(self) -> str | None:
        """Why the host cannot run the agents (an agent failed to import, the host died), or None."""
        await self._attach()
        return await self._ready

    async def fork(self, target: Any, count: int, settings: Any) -> list[int] | str:
        """Forks `count` workers for `target`; their pids, or why none were forked."""
        if (error := await self.preload_error()) is not None:
            return error
        # Pools of several agents fork at once; a reply says only which pids were forked, so each request waits
        # for its own reply before the next is sent.
        async with self._fork_lock:
            if self._gone is not None:
                return self._gone
            self._writer.write(pack(("fork", target, count, settings, self.address, self.writes_history)))
            await self._writer.drain()
            return await self._forked.get()

    async def connection(self, pid: int, timeout: float) -> tuple[asyncio.StreamReader, asyncio.StreamWriter] | None:
        """The worker's connection once it has said hello; None if it exited first or never called."""
        waiter = self._connections.setdefault(pid, asyncio.get_running_loop().create_future())
        exited = asyncio.ensure_future(self._exit_event(pid).wait())
        await asyncio.wait([waiter, exited], timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
        exited.cancel()
        return waiter.result() if waiter.done() else None

    async def exit_code(self, pid: int, timeout: float) -> int | None:
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(self._exit_event(pid).wait(), timeout)
        return self._exits.get(pid)

    def forward_invocations(self, key: tuple, invocations: list[dict]) -> None:
        """Hands invocations to the history writer ahead of the history (eval_history.Ref names them)."""
        if self._historian is not None and key not in self.held:
            self._historian.write(pack(("invocations", key, invocations)))
            self.held.add(key)

    async def write_history(self, agent: str, folder: Path, eval_set_id: str, results: list[dict]) -> None:
        """ADK eval history from `eval_history.case_results`, written while this process goes on."""
        await self._attach()
        writer = self._historian or self._writer
        writer.write(pack(("history", agent, str(folder), eval_set_id, results)))
        await writer.drain()

    async def release(self) -> None:
        """No more requests: the host finishes what it was asked (eval history) and exits. Every connection is
        closed (the workers' pools are done with theirs), so nothing at the other end waits for more."""
        if self._released:
            return
        self._released = True
        for writer in [*([self._historian] if self._historian is not None else []), *self._accepted]:
            writer.close()
        if self._writer is not None:
            self._writer.close()
            with contextlib.suppress(ConnectionError):
                await self._writer.wait_closed()
            self._server.close()
        else:
            self._control.close()
        for task in self._tasks:
            task.cancel()

    def wait(self, timeout: float = 600) -> None:
        """Waits for the host (and so for every worker it forked) to exit; reaped, their CPU counts as this
        process's children's."""
        if not self._released:  # never used, or a run that failed before releasing it: the host must see the end
            with contextlib.suppress(OSError):
                self._control.shutdown(socket.SHUT_RDWR)
            self._control.close()
        try:
            self._process.wait(timeout)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()
        with contextlib.suppress(OSError):
            os.unlink(self.address)
            self._workdir.rmdir()


_warm: list[AgentHost] = []  # started by warm_up, for the next run
_finishing: list[AgentHost] = []  # taken by a run, perhaps still writing eval history


def in_own_process(workers: int | None) -> bool:
    """`workers: 1` runs the agents in this process, unless it holds a token (core/held_tokens.py): an agent in
    process could find it among its objects, so they run in one worker process instead, which shares module-level
    state between cases all the same."""
    return workers == 1 and not held()


def hosted_agents(targets: list[Any], workers: int | None) -> list[tuple[str, Path]]:
    """What a host for these targets imports: every target that can run in a forked worker (`host_agent`),
    unless the run asked for its own process (`workers: 1`) and that process holds none of GitHub's tokens."""
    if in_own_process(workers) or not fork_supported():
        return []
    return [agent for target in targets if (agent := getattr(target, "host_agent", lambda: None)()) is not None]


def warm_up(workflow: Any) -> None:
    """Has the agent host import the workflow's `adk` agents (starting it if `warm_up_early` did not), so
    google-adk is imported while this process loads the eval sets; the next run takes it (`take_warm_host`).
    Call `finish_warm_up` last."""
    early = AgentHost(*spawned) if (spawned := take_early()) is not None else None
    agents = [(a.settings.target.agent, workflow.base_dir) for a in workflow.agents if a.settings.target.kind == "adk"]
    if in_own_process(workflow.settings.run.workers) or not fork_supported() or not agents:
        if early is not None:
            early.discard()
        return
    if early is not None:
        early.preload(agents)
        _warm.append(early)
    else:
        _warm.append(AgentHost.start(agents))


def _named(agents: list[tuple[str, Path]]) -> list[tuple[str, str]]:
    return [(reference, str(Path(base_dir).resolve())) for reference, base_dir in agents]


def take_warm_host(agents: list[tuple[str, Path]]) -> AgentHost | None:
    """The host `warm_up` started for exactly these agents. Any other warm host is stale (warmed for a run that
    stopped before taking it, or for other agents) and is discarded, never handed a run it did not import."""
    while _warm:
        host = _warm.pop()
        if agents and host.agents == _named(agents):
            _finishing.append(host)
            return host
        host.discard()
    return None


def finish_warm_up() -> None:
    """Waits for the hosts `warm_up` started: they write ADK's eval history while the caller writes the results,
    so this comes after."""
    while (spawned := take_early()) is not None:
        AgentHost(*spawned).discard()
    while _warm:  # warmed, never taken (the run stopped first): nothing to wait for
        _warm.pop().discard()
    while _finishing:
        _finishing.pop().wait()
