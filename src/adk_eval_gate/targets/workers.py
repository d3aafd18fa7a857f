"""Worker processes for in-process agents.

An ADK agent run in process costs a few milliseconds of CPU per model call inside ADK itself; one event loop on
one core then caps throughput long before the model's latency does. Worker processes — forked once the parent
has imported google-adk and the agent, so they start in milliseconds, or spawned when this process already runs
threads — pull jobs from one shared queue and run them with the same runner logic (timeouts, retries, isolation).
Results stream back for live progress; on a stop
request the workers cancel what is in flight and the parent reports the rest as not run.

Every case already runs in its own session, so splitting cases across processes changes no score; an agent
that shares module-level state between cases can set `run.workers: 1`.
"""

from __future__ import annotations

import asyncio
import contextlib
import multiprocessing
import os
import queue
import signal
import threading
from collections.abc import Sequence
from typing import Any

from adk_eval_gate.core.errors import InputError
from adk_eval_gate.core.redaction import redact_standard_streams
from adk_eval_gate.evalsets.models import EvalCase, Invocation, dump_invocation
from adk_eval_gate.targets.base import CaseRun, Target, one_line
from adk_eval_gate.targets.runner import Job, Progress, RunnerSettings, attempt

_DONE = None


def fork_available() -> bool:
    # Forking is only safe while this process runs a single thread (no executor, no queue feeder yet).
    return "fork" in multiprocessing.get_all_start_methods() and threading.active_count() == 1


def _encode(run: CaseRun) -> dict[str, Any]:
    return {
        "eval_set_id": run.eval_set_id,
        "eval_id": run.eval_id,
        "run": run.run,
        "error": run.error,
        "duration": run.duration_seconds,
        "simulator_usage": run.simulator_usage,
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
        data["simulator_usage"],
    )


async def _serve(
    target: Target, jobs: Any, results: Any, stop: Any, concurrency: int, settings: RunnerSettings
) -> None:
    await target.start()
    loop = asyncio.get_running_loop()
    local: asyncio.Queue = asyncio.Queue(maxsize=concurrency)

    async def feed() -> None:
        while True:
            try:  # a short timeout, so a stop request never leaves a thread blocked in get()
                item = await loop.run_in_executor(None, jobs.get, True, 0.1)
            except queue.Empty:
                continue
            await local.put(item)
            if item is _DONE:
                for _ in range(concurrency - 1):
                    await local.put(_DONE)
                return

    async def consume() -> None:
        while (item := await local.get()) is not _DONE:
            index, eval_set_id, case_data, run = item
            job = Job(target, eval_set_id, EvalCase.model_validate(case_data), run)
            results.put((index, _encode(await attempt(job, settings))))

    async def watch() -> None:
        while not stop.is_set():
            await asyncio.sleep(0.05)

    work = asyncio.ensure_future(asyncio.gather(feed(), *(consume() for _ in range(concurrency))))  # noqa: RUF006
    watcher = asyncio.ensure_future(watch())
    await asyncio.wait([work, watcher], return_when=asyncio.FIRST_COMPLETED)
    for task in (work, watcher):
        task.cancel()
    with contextlib.suppress(BaseException):
        await work
    await target.aclose()


def _worker_main(target, jobs, results, stop, concurrency, settings) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent decides when to stop
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    redact_standard_streams()  # a spawned worker starts with the interpreter's own streams
    try:
        asyncio.run(_serve(target, jobs, results, stop, concurrency, settings))
    except BaseException as exc:  # reported to the parent as one line; a traceback here would be lost in CI logs
        message = exc.render() if isinstance(exc, InputError) else one_line(exc)
        results.put(("fatal", message))
    results.put(("exit", os.getpid()))


async def run_jobs_in_workers(
    target: Target,
    jobs: Sequence[Job],
    settings: RunnerSettings,
    workers: int,
    *,
    quiet: bool = False,
    stop_event: asyncio.Event | None = None,
) -> tuple[list[CaseRun], str | None]:
    """Like `runner.run_jobs`, over `workers` processes sharing `settings.concurrency`. `target` is not started
    here: each worker starts its own copy."""
    # Fork is fast and inherits the imports; with threads running it is unsafe, and spawned workers (which import
    # afresh) still keep an agent that kills its process away from this one.
    context = multiprocessing.get_context("fork" if fork_available() else "spawn")
    job_queue, result_queue, stop = context.Queue(), context.Queue(), context.Event()
    per_worker = max(1, -(-settings.concurrency // workers))
    processes = [
        context.Process(
            target=_worker_main, daemon=True, args=(target, job_queue, result_queue, stop, per_worker, settings)
        )
        for _ in range(workers)
    ]
    for process in processes:  # fork before this process starts any thread (the queues' feeders included)
        process.start()
    for index, job in enumerate(jobs):
        job_queue.put((index, job.eval_set_id, job.case.model_dump(mode="json", exclude_none=True), job.run))
    for _ in processes:
        job_queue.put(_DONE)

    progress = Progress(len(jobs), quiet)
    results: list[CaseRun | None] = [None] * len(jobs)
    received = 0
    exited: set[int] = set()
    loop = asyncio.get_running_loop()
    deadline = loop.time() + settings.job_timeout if settings.job_timeout else None
    stopped: str | None = None
    while received < len(jobs) and stopped is None:
        if stop_event is not None and stop_event.is_set():
            stopped = "interrupted"
            break
        if deadline is not None and loop.time() >= deadline:
            stopped = f"job time limit of {settings.job_timeout:g}s reached"
            break
        try:
            kind, payload = await loop.run_in_executor(None, result_queue.get, True, 0.1)
        except queue.Empty:
            # Each worker's exit message follows its last result, so only a worker that is gone without one,
            # with nothing left in the queue, has died with jobs in hand.
            dead = [p for p in processes if not p.is_alive() and p.pid not in exited]
            if dead:
                codes = sorted({p.exitcode for p in dead if p.exitcode})
                stopped = f"a worker process died (exit code {', '.join(map(str, codes)) or 'unknown'})"
            elif len(exited) == len(processes):
                stopped = "the workers stopped before every job ran"
            continue
        if kind == "exit":
            exited.add(payload)
        elif kind == "fatal":
            stopped = f"worker process failed: {payload}"
        else:
            results[kind] = _decode(payload)
            received += 1
            progress.update(results[kind])

    stop.set()
    for process in processes:
        await loop.run_in_executor(None, process.join, 5)
        if process.is_alive():
            process.kill()
    final = [
        run if run is not None else CaseRun(job.eval_set_id, job.case.eval_id, job.run, None, f"not run: {stopped}")
        for run, job in zip(results, jobs, strict=True)
    ]
    return final, stopped
