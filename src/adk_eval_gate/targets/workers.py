"""Worker processes for `adk` agents.

An ADK agent costs a few milliseconds of CPU per model call inside ADK itself, so one event loop on one core caps
throughput long before the model's latency does. Workers are forked by the agent host (agent_host.py), each
runs its share of the run's concurrency with the same runner logic (timeouts, retries, isolation), and this
process hands out jobs as they finish, keeping a few queued in each worker: the load balances itself, a
spending limit admits each job as it starts, and results stream back for live progress. What the agent's
libraries log is forwarded here
and collapsed (agent_logs.py). On a stop request the workers cancel what is in flight and the rest is reported
as not run.

Every case already runs in its own session, so splitting cases across processes changes no score; an agent
that shares module-level state between cases can set `run.workers: 1` (this process).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import gc
import os
import signal
import threading
from collections import Counter, deque
from collections.abc import Callable, Sequence
from typing import Any

from adk_eval_gate.core.redaction import redact_standard_streams
from adk_eval_gate.evalsets.models import EvalCase, Invocation, dump_invocation
from adk_eval_gate.llm.client import UsageStats
from adk_eval_gate.targets import agent_logs
from adk_eval_gate.targets.agent_host import AgentHost, pack, read_message, read_reply
from adk_eval_gate.targets.base import CaseRun, Target, one_line
from adk_eval_gate.targets.host_start import pack_json
from adk_eval_gate.targets.runner import Job, Progress, RunnerSettings, attempt

_CONNECT_SECONDS = 60.0  # a worker loads the agent (already imported by the host) before it says hello


def _encode(run: CaseRun) -> dict[str, Any]:
    return {
        "eval_set_id": run.eval_set_id,
        "eval_id": run.eval_id,
        "run": run.run,
        "error": run.error,
        "duration": run.duration_seconds,
        "simulator_usage": _encode_usage(run.simulator_usage),
        "invocations": [dump_invocation(i) for i in run.invocations] if run.invocations is not None else None,
    }


def _decode(data: dict[str, Any]) -> CaseRun:
    invocations = data["invocations"]
    return CaseRun(
        data["eval_set_id"],
        data["eval_id"],
        data["run"],
        tuple(Invocation.model_validate(i) for i in invocations) if invocations is not None else None,
        data["error"],
        data["duration"],
        _decode_usage(data["simulator_usage"]),
        tuple(invocations) if invocations is not None else None,
    )


def _encode_usage(usage: UsageStats | None) -> dict[str, Any] | None:
    if usage is None:
        return None
    return {**dataclasses.asdict(usage), "unpriced": sorted(usage.unpriced)}


def _decode_usage(data: dict[str, Any] | None) -> UsageStats | None:
    return None if data is None else UsageStats(**{**data, "unpriced": set(data["unpriced"])})


# --- in the worker process --------------------------------------------------------------------------------------


def worker_main(target: Target, address: str, settings: RunnerSettings) -> int:
    redact_standard_streams()  # already done by the host; a no-op, kept so a worker never prints unmasked
    # ADK allocates heavily per model call; at the default threshold the collector runs every few hundred
    # allocations and costs about a sixth of a worker's CPU. Most of that garbage is freed by reference
    # counting anyway, so collecting less often keeps memory flat.
    gc.set_threshold(20_000, 50, 100)
    asyncio.run(_serve(target, address, settings))
    return 0


async def _serve(target: Target, address: str, settings: RunnerSettings) -> None:
    reader, writer = await asyncio.open_unix_connection(address)
    loop = asyncio.get_running_loop()

    def send(message: Any) -> None:
        if _in_loop(loop):
            writer.write(pack_json(message))
        else:  # a library logging from one of the agent's own threads
            loop.call_soon_threadsafe(writer.write, pack_json(message))

    writer.write(pack_json(("hello", os.getpid())))
    logged: Counter = Counter()
    logged_lock = threading.Lock()

    def log(text: str) -> None:  # the first of each text now; how often each came, at the end
        with logged_lock:
            logged[text] += 1
            first = logged[text] == 1
        if first:
            send(("log", text))

    handler = agent_logs.install(log)
    try:
        await target.start()
    except BaseException as exc:  # reported to the run as one line; a traceback here would be lost in CI logs
        from adk_eval_gate.core.errors import InputError

        writer.write(pack_json(("fatal", exc.render() if isinstance(exc, InputError) else one_line(exc))))
        await writer.drain()
        return
    tasks: set[asyncio.Task] = set()

    gate = asyncio.Semaphore(settings.concurrency)  # this worker's share; the run queues a few more jobs here

    async def run(index: int, eval_set_id: str, case: dict, run_number: int) -> None:
        async with gate:
            result = await attempt(Job(target, eval_set_id, EvalCase.model_validate(case), run_number), settings)
        writer.write(pack_json(("result", index, _encode(result))))
        await writer.drain()

    try:
        while (message := await read_message(reader)) is not None and message[0] == "job":
            task = asyncio.ensure_future(run(*message[1:]))
            tasks.add(task)
            task.add_done_callback(tasks.discard)
        for task in tasks:  # "stop", or the run has gone: nothing in flight is wanted any more
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
    finally:
        with contextlib.suppress(Exception):
            await target.aclose()
        agent_logs.uninstall(handler)
        with logged_lock:
            writer.write(pack_json(("log", {text: count - 1 for text, count in logged.items() if count > 1})))
        with contextlib.suppress(ConnectionError):  # flushed before the loop ends, or it would be lost
            await writer.drain()
            writer.close()
            await writer.wait_closed()


def _in_loop(loop: asyncio.AbstractEventLoop) -> bool:
    try:
        return asyncio.get_running_loop() is loop
    except RuntimeError:
        return False


# --- in the run's process ---------------------------------------------------------------------------------------


def shares(concurrency: int, workers: int) -> list[int]:
    """Each worker's part of `concurrency`: together never more than it (a user's limit may be a model's rate
    limit), as even as it divides; fewer workers than asked when there are fewer slots."""
    return [concurrency // workers + (i < concurrency % workers) for i in range(min(workers, concurrency))]


class _Worker:
    def __init__(self, pid: int, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.pid, self.reader, self.writer = pid, reader, writer
        self.in_flight: set[int] = set()
        self.gone = False


async def run_jobs_in_workers(
    host: AgentHost,
    target: Target,
    jobs: Sequence[Job],
    settings: RunnerSettings,
    workers: int,
    *,
    quiet: bool = False,
    stop_event: asyncio.Event | None = None,
    logs: agent_logs.RepeatCollapser | None = None,
    admit: Callable[[Job], str | None] | None = None,
    finished: Callable[[CaseRun], None] | None = None,
    history_tag: str | None = None,
) -> tuple[list[CaseRun], str | None]:
    """Like `runner.run_jobs`, over `workers` processes sharing `settings.concurrency`."""
    results: list[CaseRun | None] = [None] * len(jobs)
    progress = Progress(len(jobs), quiet)
    own_logs = logs is None
    logs = logs or agent_logs.RepeatCollapser()
    forked: list[int] = []
    share_of: dict[int, int] = {}
    for share, count in sorted(Counter(shares(settings.concurrency, workers)).items(), reverse=True):
        pids = await host.fork(target, count, dataclasses.replace(settings, concurrency=share))
        if isinstance(pids, str):
            return _unfinished(results, jobs, f"worker processes could not start: {pids}"), pids
        forked += pids
        share_of.update(dict.fromkeys(pids, share))
    # Each worker holds twice its share, so a worker finishing a job never waits for this process to send the
    # next; with a spending limit, a job is admitted as it starts, so only the share is handed out.
    queued = {pid: share if admit is not None else 2 * share for pid, share in share_of.items()}
    inbox: asyncio.Queue = asyncio.Queue()
    pool: list[_Worker] = []
    readers: dict[_Worker, asyncio.Task] = {}

    async def listen(worker: _Worker) -> None:
        while (message := await read_reply(worker.reader)) is not None:
            inbox.put_nowait((worker, message))
        inbox.put_nowait((worker, None))

    async def connect(pid: int) -> None:
        connection = await host.connection(pid, _CONNECT_SECONDS)
        if connection is None:
            inbox.put_nowait((_Worker(pid, None, None), None))
            return
        worker = _Worker(pid, *connection)
        pool.append(worker)
        readers[worker] = asyncio.ensure_future(listen(worker))
        inbox.put_nowait((worker, ("ready",)))

    pending = deque(range(len(jobs)))
    received = 0

    def refuse(index: int, reason: str) -> None:
        nonlocal received
        job = jobs[index]
        results[index] = CaseRun(job.eval_set_id, job.case.eval_id, job.run, None, reason)
        received += 1
        progress.update(results[index])

    def feed(worker: _Worker) -> None:
        while pending and len(worker.in_flight) < queued[worker.pid] and not worker.gone:
            index = pending.popleft()
            job = jobs[index]
            refusal = admit(job) if admit is not None else None
            if refusal is not None:
                refuse(index, refusal)
                continue
            worker.in_flight.add(index)
            worker.writer.write(
                pack(
                    (
                        "job",
                        index,
                        job.eval_set_id,
                        job.case.model_dump(mode="json", exclude_none=True),
                        job.run,
                    )
                )
            )

    connecting = [asyncio.ensure_future(connect(pid)) for pid in forked]
    stop_waiter = asyncio.ensure_future(stop_event.wait()) if stop_event is not None else None
    if stop_waiter is not None:
        stop_waiter.add_done_callback(lambda _: inbox.put_nowait((None, ("stop",))))
    loop = asyncio.get_running_loop()
    deadline = loop.time() + settings.job_timeout if settings.job_timeout else None
    stopped: str | None = None
    while received < len(jobs) and stopped is None:
        try:
            worker, message = await asyncio.wait_for(inbox.get(), None if deadline is None else deadline - loop.time())
        except asyncio.TimeoutError:
            stopped = f"job time limit of {settings.job_timeout:g}s reached"
            break
        if message is None:  # every worker stays until told there is nothing more
            worker.gone = True
            code = await host.exit_code(worker.pid, 2.0)
            stopped = f"a worker process died (exit code {code if code else 'unknown'})"
        elif message[0] == "stop":
            stopped = "interrupted"
        elif message[0] == "fatal":
            stopped = f"worker process failed: {message[1]}"
        elif message[0] == "log":
            _log(logs, message[1])
        elif message[0] == "result":
            index = message[1]
            worker.in_flight.discard(index)
            results[index] = _decode(message[2])
            if history_tag is not None and results[index].dumped is not None:
                _forward(host, history_tag, jobs[index], results[index].dumped)
            received += 1
            progress.update(results[index])
            if finished is not None:
                finished(results[index])
        if worker is not None and not worker.gone and message is not None and message[0] in ("ready", "result"):
            feed(worker)

    for task in (*connecting, *([stop_waiter] if stop_waiter else [])):
        task.cancel()
    await _finish(pool, readers, "stop" if stopped else "done")
    while not inbox.empty():
        _, message = inbox.get_nowait()
        if message is not None and message[0] == "log":
            _log(logs, message[1])
    for worker in pool:
        worker.writer.close()
    if own_logs:
        logs.summarise()
    return _unfinished(results, jobs, stopped), stopped


def _forward(host: AgentHost, tag: str, job: Job, actual: tuple[dict, ...]) -> None:
    """The run's invocations, to the history writer while the agent runs (see historian.py)."""
    host.forward_invocations(("actual", tag, job.eval_set_id, job.case.eval_id, job.run), list(actual))
    if job.case.conversation:
        expected = [dump_invocation(i) for i in job.case.conversation]
        host.forward_invocations(("expected", tag, job.eval_set_id, job.case.eval_id), expected)


def _log(logs: agent_logs.RepeatCollapser, said: str | dict[str, int]) -> None:
    if isinstance(said, str):
        logs.add(said)
    else:
        for text, repeats in said.items():
            logs.add(text, repeats)


async def _finish(pool: list[_Worker], readers: dict[_Worker, asyncio.Task], last: str) -> None:
    """Tells each worker there is nothing more (or to stop what it is doing) and waits until it has closed its
    connection, which it does last, after its repeated log lines (the host's word that it exited comes later);
    one that has not within a few seconds is killed."""
    for worker in pool:
        if not worker.gone:
            with contextlib.suppress(ConnectionError):
                worker.writer.write(pack((last,)))
                worker.writer.write_eof()
    if readers:
        await asyncio.wait(readers.values(), timeout=5.0)
    for worker, task in readers.items():
        if not task.done():
            task.cancel()
            with contextlib.suppress(OSError):
                os.kill(worker.pid, signal.SIGKILL)


def _unfinished(results: list[CaseRun | None], jobs: Sequence[Job], stopped: str | None) -> list[CaseRun]:
    return [
        run if run is not None else CaseRun(job.eval_set_id, job.case.eval_id, job.run, None, f"not run: {stopped}")
        for run, job in zip(results, jobs, strict=True)
    ]
