"""A worker process (forked by the agent host, host_process.py): runs the jobs the run sends with the runner's
own logic (timeouts, retries, isolation), says which job it starts and sends each result back as it finishes,
and forwards what the agent's libraries log. Every message is a host_messages dataclass; what it sends is JSON.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import os
import threading
from collections import Counter

from adk_eval_gate.core.redaction import redact_standard_streams
from adk_eval_gate.evalsets.adk_eval_schema import EvalCase
from adk_eval_gate.targets import agent_logs
from adk_eval_gate.targets.case_run import Target, one_line
from adk_eval_gate.targets.host_messages import (
    Fatal,
    Hello,
    Log,
    LogCounts,
    Reply,
    Result,
    RunJob,
    Started,
    pack_json,
    read_from_run,
)
from adk_eval_gate.targets.runner import Job, RunnerSettings, attempt


def worker_main(target: Target, address: str, settings: RunnerSettings) -> int:
    redact_standard_streams()  # already done by the host; a no-op, kept so a worker never prints unmasked
    # ADK allocates heavily per model call; at the default threshold the collector runs every few hundred
    # allocations and costs about a sixth of a worker's CPU. Most of that garbage is freed by reference
    # counting anyway, so collecting less often keeps memory flat.
    gc.set_threshold(20_000, 50, 100)
    asyncio.run(_serve(target, address, settings))
    return 0


def spawned_main() -> int:
    """A worker started as a fresh interpreter (host_process._spawn): the target, the run's address and the
    settings a forked worker would inherit arrive pickled on standard input, from the host (the trusted side)."""
    import pickle
    import sys

    target, address, settings = pickle.load(sys.stdin.buffer)
    return worker_main(target, address, settings)


async def _fatal(writer: asyncio.StreamWriter, exc: BaseException) -> None:
    from adk_eval_gate.core.errors import InputError

    writer.write(pack_json(Fatal(exc.render() if isinstance(exc, InputError) else one_line(exc))))
    await writer.drain()


async def _serve(target: Target, address: str, settings: RunnerSettings) -> None:
    reader, writer = await asyncio.open_unix_connection(address)
    loop = asyncio.get_running_loop()

    def send(message: Reply) -> None:
        if _in_loop(loop):
            writer.write(pack_json(message))
        else:  # a library logging from one of the agent's own threads
            loop.call_soon_threadsafe(writer.write, pack_json(message))

    writer.write(pack_json(Hello(os.getpid(), "worker")))
    logged: Counter[str] = Counter()
    logged_lock = threading.Lock()

    def log(text: str) -> None:  # the first of each text now; how often each came, at the end
        with logged_lock:
            logged[text] += 1
            first = logged[text] == 1
        if first:
            send(Log(text))

    handler = agent_logs.install(log)
    try:
        await target.start()
    except BaseException as exc:  # reported to the run as one line; a traceback here would be lost in CI logs
        await _fatal(writer, exc)
        return
    tasks: set[asyncio.Task[None]] = set()

    gate = asyncio.Semaphore(settings.concurrency)  # this worker's share; the run queues a few more jobs here

    async def run(job: RunJob) -> None:
        async with gate:
            # Said before it runs: should this job take the process down, the run knows which case did.
            writer.write(pack_json(Started(job.index)))
            case = EvalCase.model_validate(job.case)
            result = await attempt(Job(target, job.eval_set_id, case, job.run), settings)
        writer.write(pack_json(Result(job.index, result)))
        await writer.drain()

    try:
        while isinstance(message := await read_from_run(reader), RunJob):
            task = asyncio.ensure_future(run(message))
            tasks.add(task)
            task.add_done_callback(tasks.discard)
        for task in tasks:  # Finish, or the run has gone: nothing in flight is wanted any more
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
    finally:
        with contextlib.suppress(Exception):
            await target.aclose()
        agent_logs.uninstall(handler)
        with logged_lock:
            writer.write(pack_json(LogCounts({text: count - 1 for text, count in logged.items() if count > 1})))
        with contextlib.suppress(ConnectionError):  # flushed before the loop ends, or it would be lost
            await writer.drain()
            writer.close()
            await writer.wait_closed()


def _in_loop(loop: asyncio.AbstractEventLoop) -> bool:
    try:
        return asyncio.get_running_loop() is loop
    except RuntimeError:
        return False
