"""One round of jobs through the agents: in-process agents with many jobs go to forked worker processes,
every other job shares one in-process pool; SIGINT/SIGTERM stop it cleanly."""

from __future__ import annotations

import asyncio
import signal
from contextlib import contextmanager

from adk_eval_gate.run.budget import SpendingLimit
from adk_eval_gate.run.plan import Plan
from adk_eval_gate.run.settings import worker_count
from adk_eval_gate.targets import CaseRun, Target
from adk_eval_gate.targets.runner import Job, RunnerSettings, run_jobs
from adk_eval_gate.targets.workers import run_jobs_in_workers


@contextmanager
def _stop_on_signals(stop: asyncio.Event):
    loop = asyncio.get_running_loop()
    installed = []
    for sig in (signal.SIGINT, signal.SIGTERM):
        try:
            loop.add_signal_handler(sig, stop.set)
            installed.append(sig)
        except (NotImplementedError, RuntimeError, ValueError):  # not the main thread, or no signals here
            pass
    try:
        yield
    finally:
        for sig in installed:
            loop.remove_signal_handler(sig)


async def dispatch(
    plan: Plan,
    targets: list[Target],
    jobs: list[Job],
    settings: RunnerSettings,
    quiet: bool,
    started: list[Target],
    *,
    allow_workers: bool = True,
    limit: SpendingLimit | None = None,
    round_number: int = 1,
) -> tuple[list[CaseRun], str | None]:
    """In-process agents with many jobs go to forked worker processes (one pool per agent, started first, while
    this process has no threads); every other job shares one in-process pool. Targets started here stay started
    for later rounds (`started`); the caller closes them. A spending limit is checked in this process, so with
    one every job runs here."""
    pooled: list[tuple[Target, list[int]]] = []
    local: list[int] = []
    for target in targets:
        indices = [i for i, job in enumerate(jobs) if job.target is target]
        preload = getattr(target, "preload", None)
        if (
            allow_workers
            and limit is None
            and preload is not None
            and indices
            and all(target is not t for t in started)
            and worker_count(settings, len(indices)) > 1
        ):
            preload()
            pooled.append((target, indices))
        else:
            local.extend(indices)
    results: list[CaseRun | None] = [None] * len(jobs)
    reasons: list[str] = []
    stop = asyncio.Event()

    async def run_group(coroutine, indices: list[int]) -> None:
        group_runs, reason = await coroutine
        for index, run in zip(indices, group_runs, strict=True):
            results[index] = run
        if reason:
            reasons.append(reason)

    with _stop_on_signals(stop):
        groups = []
        for target, indices in pooled:
            group_jobs = [jobs[i] for i in indices]
            workers = worker_count(settings, len(indices))
            groups.append(
                run_group(
                    run_jobs_in_workers(target, group_jobs, settings, workers, quiet=quiet, stop_event=stop), indices
                )
            )
        local_targets = {id(jobs[i].target): jobs[i].target for i in local}

        async def run_local():
            for target in local_targets.values():
                if all(target is not t for t in started):
                    await target.start()
                    started.append(target)
            admit = None
            if limit is not None:

                def admit(job: Job) -> str | None:
                    return limit.admit((id(job.target), job.eval_set_id, job.case.eval_id, round_number))

            return await run_jobs(
                [jobs[i] for i in local],
                settings,
                quiet=quiet,
                stop=stop,
                admit=admit,
                finished=limit.record_run if limit is not None else None,
            )

        if local:
            groups.append(run_group(run_local(), local))
        await asyncio.gather(*groups)
    return [r for r in results if r is not None], (reasons[0] if reasons else None)
