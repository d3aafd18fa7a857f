"""The run's handle on its agent host: one process, started as early as the run knows its agents, that imports
google-adk and every `adk` agent once and then forks each worker process from that warm state.

Why a separate process: forking the run's own process is unsafe once it has threads or an event loop, and
spawning workers instead makes each of them import google-adk again (about 1.5 s of CPU apiece). The host has
neither threads nor a loop when it forks, so workers start in milliseconds whatever their number, share the
imported code's memory, and the run's own process never imports google-adk at all. The host also writes ADK's
eval history at the end, since it has google-adk loaded, while this process writes the results file.

Messages on both channels (host control, each worker's connection): host_messages.py (JSON towards the run).
The hosts of one command are held by the command's AgentHostPool (host_pool.py), never by this module.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any, Literal, Protocol, runtime_checkable

from adk_eval_gate.core.command_files import runs_pull_request_code_elsewhere
from adk_eval_gate.targets.case_run import Target
from adk_eval_gate.targets.host_messages import (
    Exited,
    Fork,
    Forked,
    Hello,
    HoldInvocations,
    Preload,
    Ready,
    WriteHistory,
    pack,
    read_reply,
)
from adk_eval_gate.targets.host_start import host_supported, spawn, take_judge_credentials, worker_start_method
from adk_eval_gate.targets.host_timeouts import HostTimeouts
from adk_eval_gate.targets.runner import RunnerSettings

Spawned = tuple["subprocess.Popen[bytes]", socket.socket, Path]


@runtime_checkable
class HostableTarget(Protocol):
    """A target the agent host can run in forked workers: it names what the host imports (reference, base
    directory), or None when it must run in the run's own process."""

    def host_agent(self) -> tuple[str, Path] | None: ...


def host_agent(target: Target) -> tuple[str, Path] | None:
    return target.host_agent() if isinstance(target, HostableTarget) else None


class AgentHost:
    def __init__(
        self, spawned: Spawned, timeouts: HostTimeouts, start_method: Literal["fork", "spawn"] | None = None
    ) -> None:
        self._process, self._control, self._workdir = spawned
        self.timeouts = timeouts
        self.start_method = start_method or worker_start_method()  # how the host starts each worker
        self.address = str(self._workdir / "w")
        self.writes_history = False  # set when the run will ask for ADK eval history: the host prepares for it
        self.agents: list[tuple[str, str]] = []  # what `preload` named: a run takes a warm host only for these
        self._writer: asyncio.StreamWriter | None = None
        self._ready: asyncio.Future[str | None] | None = None
        self._forked: asyncio.Queue[tuple[int, ...] | str] | None = None
        self._exits: dict[int, int] = {}
        self._exit_events: dict[int, asyncio.Event] = {}
        self._connections: dict[int, asyncio.Future[tuple[asyncio.StreamReader, asyncio.StreamWriter]]] = {}
        self._tasks: list[asyncio.Task[None]] = []
        self._server: asyncio.AbstractServer | None = None
        self._historian: asyncio.StreamWriter | None = None  # the history writer (historian.py), once connected
        self._historian_pid: int | None = None
        self.held: set[tuple[object, ...]] = set()  # invocations forwarded to it
        self._accepted: list[asyncio.StreamWriter] = []  # every connection, closed by `release` whatever its state
        self._released = False
        self._fork_lock: asyncio.Lock | None = None  # one fork request answered at a time: replies carry no name
        self._gone: str | None = None  # why the host can fork no more, once it has gone

    @classmethod
    def start(
        cls,
        agents: list[tuple[str, Path]] | None,
        timeouts: HostTimeouts,
        start_method: Literal["fork", "spawn"] | None = None,
        played: tuple[str, ...] = (),
    ) -> AgentHost:
        """Starts the host, which imports google-adk's runtime at once, then `agents` (reference, base directory)
        once they are named here or later by `preload`. This returns without waiting, so the imports overlap
        this process's own start-up."""
        host = cls(spawn(), timeouts, start_method)
        if agents is not None:
            host.preload(agents, played)
        return host

    def preload(self, agents: list[tuple[str, Path]], played: tuple[str, ...] = ()) -> None:
        """Names the agents the host imports. The host loads their `.env` itself; this process takes from it only
        the judges' model credentials (host_start.take_judge_credentials): a proxy there is the agent's alone."""
        for reference, base_dir in agents:
            take_judge_credentials(reference, base_dir)
        self.agents = named(agents)
        named_agents = tuple((ref, str(base)) for ref, base in agents)
        message = Preload(named_agents, self.timeouts.children_grace, self.start_method, played)
        with contextlib.suppress(OSError):  # a host that died importing google-adk: preload_error says so
            self._control.sendall(pack(message))

    def discard(self) -> None:
        """A host started for a config that turned out to run no `adk` agent here."""
        self._control.close()
        self._process.kill()
        self.wait()

    async def _attach(self) -> tuple[asyncio.StreamWriter, asyncio.Future[str | None]]:
        if self._writer is None or self._ready is None:
            loop = asyncio.get_running_loop()
            self._ready, self._forked, self._fork_lock = loop.create_future(), asyncio.Queue(), asyncio.Lock()
            reader, self._writer = await asyncio.open_unix_connection(sock=self._control)
            self._server = await asyncio.start_unix_server(self._on_worker, path=self.address)
            self._tasks = [asyncio.ensure_future(self._listen(reader, self._ready, self._forked))]
        return self._writer, self._ready

    async def _listen(
        self,
        reader: asyncio.StreamReader,
        ready: asyncio.Future[str | None],
        forked: asyncio.Queue[tuple[int, ...] | str],
    ) -> None:
        while True:
            match await read_reply(reader):
                case Ready(error=error):
                    ready.set_result(error)
                case Forked(pids=pids):
                    forked.put_nowait(pids)
                case Exited(pid=pid, code=exit_code):
                    self._exits[pid] = exit_code
                    self._exit_event(pid).set()
                case _:  # gone, or something the host never sends: it can no longer be trusted to answer
                    break
        code = self._process.poll()
        gone = "the agent host process exited" + (f" (exit code {code})" if code is not None else "")
        if not ready.done():
            ready.set_result(gone)
        self._gone = gone
        forked.put_nowait(gone)
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
        if not isinstance(hello, Hello):
            writer.close()
            return
        if hello.role == "historian":
            self._historian, self._historian_pid = writer, hello.pid
            return
        waiter = self._connections.setdefault(hello.pid, asyncio.get_running_loop().create_future())
        if not waiter.done():
            waiter.set_result((reader, writer))

    def _exit_event(self, pid: int) -> asyncio.Event:
        return self._exit_events.setdefault(pid, asyncio.Event())

    async def preload_error(self) -> str | None:
        """Why the host cannot run the agents (an agent failed to import, the host died), or None."""
        _, ready = await self._attach()
        return await ready

    async def fork(self, target: Target, count: int, settings: RunnerSettings) -> tuple[int, ...] | str:
        """Forks `count` workers for `target`; their pids, or why none were forked."""
        if (error := await self.preload_error()) is not None:
            return error
        writer, _ = await self._attach()
        assert self._fork_lock is not None and self._forked is not None  # set by _attach
        # Pools of several agents fork at once; a reply says only which pids were forked, so each request waits
        # for its own reply before the next is sent.
        async with self._fork_lock:
            if self._gone is not None:
                return self._gone
            writer.write(pack(Fork(target, count, settings, self.address, self.writes_history)))
            await writer.drain()
            return await self._forked.get()

    async def connection(self, pid: int) -> tuple[asyncio.StreamReader, asyncio.StreamWriter] | None:
        """The worker's connection once it has said hello; None if it exited first or never called in time."""
        waiter = self._connections.setdefault(pid, asyncio.get_running_loop().create_future())
        exited = asyncio.ensure_future(self._exit_event(pid).wait())
        either: list[asyncio.Future[Any]] = [waiter, exited]
        await asyncio.wait(either, timeout=self.timeouts.worker_start, return_when=asyncio.FIRST_COMPLETED)
        exited.cancel()
        return waiter.result() if waiter.done() else None

    async def exit_code(self, pid: int) -> int | None:
        """How the worker ended, as the host saw it (negative: the signal), or None if the host did not say."""
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(self._exit_event(pid).wait(), self.timeouts.exit_report)
        return self._exits.get(pid)

    def exited(self, pid: int) -> bool:
        """Whether the host has reported this worker's exit (and so reaped it)."""
        return pid in self._exits

    def forward_invocations(self, key: tuple[object, ...], invocations: list[dict[str, object]]) -> None:
        """Hands invocations to the history writer ahead of the history (eval_history.Ref names them)."""
        if self._historian is not None and key not in self.held:
            self._historian.write(pack(HoldInvocations(key, invocations)))
            self.held.add(key)

    async def write_history(self, agent: str, folder: Path, eval_set_id: str, results: list[dict[str, object]]) -> None:
        """ADK eval history from `eval_history.case_results`, written while this process goes on."""
        control, _ = await self._attach()
        writer = self._historian or control
        writer.write(pack(WriteHistory(agent, str(folder), eval_set_id, results)))
        await writer.drain()

    async def release(self) -> None:
        """No more requests: the host finishes what it was asked (eval history) and exits. Every connection is
        closed (the workers' pools are done with theirs), so nothing at the other end waits for more."""
        if self._released:
            return
        self._released = True
        for writer in [*([self._historian] if self._historian is not None else []), *self._accepted]:
            writer.close()
        if self._historian is not None:
            await self._sent_to_historian(self._historian)
        if self._writer is not None:
            self._writer.close()
            with contextlib.suppress(ConnectionError):
                await self._writer.wait_closed()
            if self._server is not None:
                self._server.close()
        else:
            self._control.close()
        for task in self._tasks:
            task.cancel()

    async def _sent_to_historian(self, writer: asyncio.StreamWriter) -> None:
        """Until the history writer has taken every byte sent to it and the connection is closed. Bytes still queued
        when this process stops serving its connections are never sent, nor is the connection closed: the writer
        would wait for the rest of a message for ever, the host on the writer, this run on the host (the
        five-minute hang of a loaded machine, where the writer runs at a low priority). It reads as soon as data
        arrives (historian._Inbox), so this is quick; one that takes nothing is cut off, and named."""
        try:
            await asyncio.wait_for(writer.wait_closed(), self.timeouts.history_send)
        except TimeoutError:
            writer.transport.abort()
            print(
                f"warning: the ADK eval history writer (pid {self._historian_pid}) took nothing sent to it within "
                f"{self.timeouts.history_send:g} s; ADK eval history not written",
                file=sys.stderr,
            )
        except OSError:  # it has gone (and the host says how, if it must)
            pass

    def wait(self) -> None:
        """Waits for the host (and so for every worker it forked) to exit; reaped, their CPU counts as this
        process's children's."""
        if not self._released:  # never used, or a run that failed before releasing it: the host must see the end
            with contextlib.suppress(OSError):
                self._control.shutdown(socket.SHUT_RDWR)
            self._control.close()
        try:
            self._process.wait(self.timeouts.host_exit)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()
        with contextlib.suppress(OSError):
            os.unlink(self.address)
            self._workdir.rmdir()


def in_own_process(workers: int | None) -> bool:
    """`workers: 1` runs the agents in this process, unless it holds a token (core/held_tokens.py) or the runner's
    command files are set (core/command_files.py): an agent in process could find the token among its objects, or
    leave a thread that writes the files after they were checked, so they run in one worker process instead, which
    shares module-level state between cases all the same."""
    return workers == 1 and not runs_pull_request_code_elsewhere()


def hosted_agents(targets: list[Target], workers: int | None) -> list[tuple[str, Path]]:
    """What a host for these targets imports: every target that can run in a forked worker (`host_agent`),
    unless the run asked for its own process (`workers: 1`) and that process holds none of GitHub's tokens, or
    this platform can run no host (host_start.host_supported)."""
    if in_own_process(workers) or not host_supported():
        return []
    return [agent for target in targets if (agent := host_agent(target)) is not None]


def played_agents(targets: list[Target]) -> tuple[str, ...]:
    """The references of the targets whose model is played offline (`--offline`): the host needs no key for them."""
    return tuple(agent[0] for target in targets if getattr(target, "played", False) and (agent := host_agent(target)))


def named(agents: list[tuple[str, Path]]) -> list[tuple[str, str]]:
    return [(reference, str(Path(base_dir).resolve())) for reference, base_dir in agents]
