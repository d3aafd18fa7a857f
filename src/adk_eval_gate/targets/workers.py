"""Worker processes for `adk` agents: the run's side (the worker's own is worker_process.py).

An ADK agent costs a few milliseconds of CPU per model call inside ADK itself, so one event loop on one core caps
throughput long before the model's latency does. Workers are forked by the agent host (agent_host.py), each
runs its share of the run's concurrency with the same runner logic (timeouts, retries, isolation), and this
process hands out jobs as they finish, keeping a few queued in each worker: the load balances itself, a
spending limit admits each job as it starts, and results stream back for live progress. What the agent's
libraries log is forwarded here and collapsed (agent_logs.py). On a stop request the workers cancel what is in
flight and the rest is reported as not run.

A worker that dies (a native crash, an agent calling os._exit, the kernel's OOM killer) or sends what the run
cannot read costs the case it was running, not the run: that case is an error naming how the process ended,
the jobs it held but had not started go back to the queue, and a new worker is forked in its place.

Every case already runs in its own session, so splitting cases across processes changes no score; an agent
that shares module-level state between cases can set `run.workers: 1` (this process).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import os
import signal
from collections import Counter, deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from adk_eval_gate.evalsets.adk_eval_schema import dump_invocation
from adk_eval_gate.targets import agent_logs
from adk_eval_gate.targets.agent_host import AgentHost
from adk_eval_gate.targets.case_run import CaseRun, Target
from adk_eval_gate.targets.host_messages import (
    Fatal,
    Finish,
    Log,
    LogCounts,
    Malformed,
    Reply,
    Result,
    RunJob,
    Started,
    pack,
    read_reply,
)
from adk_eval_gate.targets.runner import Job, Progress, RunnerSettings


def shares(concurrency: int, workers: int) -> list[int]:
    """Each worker's part of `concurrency`: together never more than it (a user's limit may be a model's rate
    limit), as even as it divides; fewer workers than asked when there are fewer slots."""
    return [concurrency // workers + (i < concurrency % workers) for i in range(min(workers, concurrency))]


def exit_phrase(code: int | None) -> str:
    """How a worker ended, as os.waitstatus_to_exitcode gave it to the host: negative is the signal."""
    if code is None:
        return "exit code unknown"
    if code < 0:
        with contextlib.suppress(ValueError):
            return f"killed by {signal.Signals(-code).name}"
        return f"killed by signal {-code}"
    return f"exit code {code}"


@dataclass(eq=False)
class _Worker:
    pid: int
    share: int
    reader: asyncio.StreamReader | None = None
    writer: asyncio.StreamWriter | None = None
    held: list[int] = field(default_factory=list)  # jobs sent to it, in order, not yet answered
    started: set[int] = field(default_factory=set)  # of those, the ones it said it began
    gone: bool = False


@dataclass(frozen=True)
class _Connected:
    pass


@dataclass(frozen=True)
class _Lost:
    """The worker's connection ended (or never began)."""


@dataclass(frozen=True)
class _StopAsked:
    pass


_Event = Reply | Malformed | _Connected | _Lost | _StopAsked


@dataclass(frozen=True)
class WorkerHooks:
    """How a pool of worker processes reports and is steered: progress lines (`quiet`), the stop event, the
    agent's library log (`logs`; None: the pool's own, summarised at its end), the spending limit's `admit` and
    `finished`, and the ADK history tag its runs are forwarded under."""

    quiet: bool = False
    stop_event: asyncio.Event | None = None
    logs: agent_logs.RepeatCollapser | None = None
    admit: Callable[[Job], str | None] | None = None
    finished: Callable[[CaseRun], None] | None = None
    history_tag: str | None = None


class _Pool:
    def __init__(
        self,
        host: AgentHost,
        target: Target,
        jobs: Sequence[Job],
        settings: RunnerSettings,
        logs: agent_logs.RepeatCollapser,
        hooks: WorkerHooks,
    ) -> None:
        self.host, self.target, self.jobs, self.settings = host, target, jobs, settings
        self.progress, self.logs, self.admit, self.finished, self.history_tag = (
            Progress(len(jobs), hooks.quiet),
            logs,
            hooks.admit,
            hooks.finished,
            hooks.history_tag,
        )
        self.results: list[CaseRun | None] = [None] * len(jobs)
        self.pending = deque(range(len(jobs)))
        self.received = 0
        self.workers: list[_Worker] = []
        self.inbox: asyncio.Queue[tuple[_Worker | None, _Event]] = asyncio.Queue()
        self.tasks: list[asyncio.Task[None]] = []
        self.readers: dict[_Worker, asyncio.Task[None]] = {}
        self.stopped: str | None = None

    async def fork(self, share: int, count: int) -> str | None:
        """`count` workers with `share` of the concurrency each; why none could be forked, or None."""
        pids = await self.host.fork(self.target, count, dataclasses.replace(self.settings, concurrency=share))
        if isinstance(pids, str):
            return pids
        for pid in pids:
            worker = _Worker(pid, share)
            self.workers.append(worker)
            self.tasks.append(asyncio.ensure_future(self._connect(worker)))
        return None

    async def _connect(self, worker: _Worker) -> None:
        connection = await self.host.connection(worker.pid)
        if connection is None:
            if not self.host.exited(worker.pid):  # never called in time: it will not be waited for
                with contextlib.suppress(OSError):
                    os.kill(worker.pid, signal.SIGKILL)
            self.inbox.put_nowait((worker, _Lost()))
            return
        worker.reader, worker.writer = connection
        self.readers[worker] = asyncio.ensure_future(self._listen(worker, worker.reader))
        self.inbox.put_nowait((worker, _Connected()))

    async def _listen(self, worker: _Worker, reader: asyncio.StreamReader) -> None:
        while True:
            message = await read_reply(reader)
            self.inbox.put_nowait((worker, _Lost() if message is None else message))
            if message is None or isinstance(message, Malformed):
                return

    def feed(self, worker: _Worker) -> None:
        # Each worker holds twice its share, so a worker finishing a job never waits for this process to send the
        # next; with a spending limit, a job is admitted as it starts, so only the share is handed out.
        room = worker.share if self.admit is not None else 2 * worker.share
        while self.pending and len(worker.held) < room and not worker.gone and worker.writer is not None:
            index = self.pending.popleft()
            job = self.jobs[index]
            refusal = self.admit(job) if self.admit is not None else None
            if refusal is not None:
                self.record(index, CaseRun(job.eval_set_id, job.case.eval_id, job.run, None, refusal))
                continue
            worker.held.append(index)
            case = job.case.model_dump(mode="json", exclude_none=True)
            worker.writer.write(pack(RunJob(index, job.eval_set_id, case, job.run)))

    def record(self, index: int, run: CaseRun) -> None:
        self.results[index] = run
        self.received += 1
        self.progress.update(run)

    async def handle(self, worker: _Worker | None, event: _Event) -> None:
        if worker is None or worker.gone:  # a stop request, or the last words of a worker already counted out
            if isinstance(event, _StopAsked):
                self.stopped = "interrupted"
            elif isinstance(event, (Log, LogCounts)):
                self.log(event)
            return
        match event:
            case _Connected():
                self.feed(worker)
            case Started(index=index) if index in worker.held:
                worker.started.add(index)
            case Result(index=index, run=run) if index in worker.held:
                worker.held.remove(index)
                worker.started.discard(index)
                self.record(index, run)
                if self.history_tag is not None and run.dumped is not None:
                    _forward(self.host, self.history_tag, self.jobs[index], run.dumped)
                if self.finished is not None:
                    self.finished(run)
                self.feed(worker)
            case Log() | LogCounts():
                self.log(event)
            case Fatal(reason=reason):  # the agent does not start: every worker would fail the same way
                self.stopped = f"worker process failed: {reason}"
            case _Lost():
                await self.lose(worker, f"died ({exit_phrase(await self.host.exit_code(worker.pid))})")
            case Malformed(reason=reason):
                await self.lose(worker, f"sent a message the run cannot read ({reason}), so it was stopped", kill=True)
            case _:  # a reply no worker sends (a result for a job it does not hold, a second hello)
                await self.lose(worker, "sent a message out of turn, so it was stopped", kill=True)

    def log(self, message: Log | LogCounts) -> None:
        if isinstance(message, Log):
            self.logs.add(message.text)
        else:
            for text, repeats in message.counts.items():
                self.logs.add(text, repeats)

    async def lose(self, worker: _Worker, how: str, *, kill: bool = False) -> None:
        """The worker is out: the case it was running is an error saying how it ended, the jobs it held but had
        not started go back to the queue, and a worker replaces it. A worker that dies with no case running
        (starting up) is not replaced: its replacement would most likely die the same way."""
        worker.gone = True
        if kill:
            with contextlib.suppress(OSError):
                os.kill(worker.pid, signal.SIGKILL)
        if self.stopped is not None:  # the run is ending anyway: what the worker held is reported as not run
            return
        running = [index for index in worker.held if index in worker.started]
        self.pending.extendleft(reversed([index for index in worker.held if index not in worker.started]))
        worker.held.clear()
        for index in running:
            job = self.jobs[index]
            reason = f"worker process {how} while running this case"
            self.record(index, CaseRun(job.eval_set_id, job.case.eval_id, job.run, None, reason))
        if running and self.pending:
            error = await self.fork(worker.share, 1)
            if error is not None:
                self.stopped = f"a worker process {how}; no other could be forked: {error}"
                return
        if self.pending and not any(not other.gone for other in self.workers):
            self.stopped = f"a worker process {how}"
            return
        for other in self.workers:
            self.feed(other)

    async def finish(self) -> None:
        """Tells each worker there is nothing more (or to stop what it is doing) and waits until it has closed its
        connection, which it does last, after its repeated log lines (the host's word that it exited comes
        later); one that has not within `worker_exit` is killed."""
        for worker in self.workers:
            if not worker.gone and worker.writer is not None:
                with contextlib.suppress(ConnectionError):
                    worker.writer.write(pack(Finish()))
                    worker.writer.write_eof()
        live = [task for worker, task in self.readers.items() if not worker.gone]
        if live:
            await asyncio.wait(live, timeout=self.host.timeouts.worker_exit)
        for worker, task in self.readers.items():
            if not task.done():
                task.cancel()
                with contextlib.suppress(OSError):
                    os.kill(worker.pid, signal.SIGKILL)
        while not self.inbox.empty():
            _, event = self.inbox.get_nowait()
            if isinstance(event, (Log, LogCounts)):
                self.log(event)
        for worker in self.workers:
            if worker.writer is not None:
                worker.writer.close()


async def run_jobs_in_workers(
    host: AgentHost,
    target: Target,
    jobs: Sequence[Job],
    settings: RunnerSettings,
    workers: int,
    hooks: WorkerHooks = WorkerHooks(),
) -> tuple[list[CaseRun], str | None]:
    """Like `runner.run_jobs`, over `workers` processes sharing `settings.concurrency`."""
    own_logs = hooks.logs is None
    logs = hooks.logs or agent_logs.RepeatCollapser()
    stop_event = hooks.stop_event
    pool = _Pool(host, target, jobs, settings, logs, hooks)
    for share, count in sorted(Counter(shares(settings.concurrency, workers)).items(), reverse=True):
        error = await pool.fork(share, count)
        if error is not None:
            for task in pool.tasks:
                task.cancel()
            return _unfinished(pool.results, jobs, f"worker processes could not start: {error}"), error
    stop_waiter = asyncio.ensure_future(stop_event.wait()) if stop_event is not None else None
    if stop_waiter is not None:
        stop_waiter.add_done_callback(lambda _: pool.inbox.put_nowait((None, _StopAsked())))
    loop = asyncio.get_running_loop()
    deadline = loop.time() + settings.job_timeout if settings.job_timeout else None
    while pool.received < len(jobs) and pool.stopped is None:
        try:
            worker, event = await asyncio.wait_for(
                pool.inbox.get(), None if deadline is None else deadline - loop.time()
            )
        except asyncio.TimeoutError:
            pool.stopped = f"job time limit of {settings.job_timeout:g}s reached"
            break
        await pool.handle(worker, event)
    for task in pool.tasks:
        task.cancel()
    if stop_waiter is not None:
        stop_waiter.cancel()
    await pool.finish()
    if own_logs:
        logs.summarise()
    return _unfinished(pool.results, jobs, pool.stopped), pool.stopped


def _forward(host: AgentHost, tag: str, job: Job, actual: tuple[dict[str, object], ...]) -> None:
    """The run's invocations, to the history writer while the agent runs (see historian.py)."""
    host.forward_invocations(("actual", tag, job.eval_set_id, job.case.eval_id, job.run), list(actual))
    if job.case.conversation:
        expected = [dump_invocation(i) for i in job.case.conversation]
        host.forward_invocations(("expected", tag, job.eval_set_id, job.case.eval_id), expected)


def _unfinished(results: list[CaseRun | None], jobs: Sequence[Job], stopped: str | None) -> list[CaseRun]:
    return [
        run if run is not None else CaseRun(job.eval_set_id, job.case.eval_id, job.run, None, f"not run: {stopped}")
        for run, job in zip(results, jobs, strict=True)
    ]
