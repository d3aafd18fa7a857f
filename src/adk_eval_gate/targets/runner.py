"""Runs every (case, run) job of a plan through its target: bounded concurrency, a per-case timeout, retries
for transient errors only, and isolation (a job that raises or hangs becomes an `error` run; the rest go on).

Progress lines suit CI logs. When the job is interrupted (SIGINT/SIGTERM) or runs past its overall time
limit, finished runs are kept and every unfinished one is returned as an error saying why it did not run.
"""

from __future__ import annotations

import asyncio
import dataclasses
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TextIO

from adk_eval_gate.core.progress import ProgressLine
from adk_eval_gate.evalsets.adk_eval_schema import EvalCase
from adk_eval_gate.targets.case_run import CaseRun, Target, TransientTargetError, one_line


@dataclass(frozen=True)
class Job:
    target: Target
    eval_set_id: str
    case: EvalCase
    run: int


@dataclass(frozen=True)
class RunnerSettings:
    concurrency: int = 16
    timeout: float = 600.0  # seconds per case and run
    retries: int = 2
    backoff: float = 1.0  # first retry delay, doubled each retry, with jitter
    job_timeout: float | None = None  # seconds for the whole job
    workers: int | None = None  # processes for in-process agents; None picks by job count and cores


class Progress:
    """Inference progress: runs done and errored so far."""

    def __init__(
        self, total: int, quiet: bool, stream: TextIO | None = None, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.line = ProgressLine(total, quiet, stream, clock)
        self.failed = 0

    @property
    def done(self) -> int:
        return self.line.done

    def update(self, run: CaseRun) -> None:
        self.failed += 0 if run.ok else 1
        self.line.advance(lambda: f"{self.line.done}/{self.line.total} runs done, {self.failed} errored")


async def attempt(job: Job, settings: RunnerSettings) -> CaseRun:
    started = time.monotonic()
    delay = settings.backoff
    for try_number in range(settings.retries + 1):
        try:
            result = await asyncio.wait_for(job.target.run_case(job.eval_set_id, job.case, job.run), settings.timeout)
            return dataclasses.replace(result, duration_seconds=time.monotonic() - started)
        except asyncio.TimeoutError:
            reason = f"timed out after {settings.timeout:g}s"
            break  # a hung agent is not retried: it would very likely hang again and double the bill
        except TransientTargetError as exc:
            reason = one_line(exc)
            if try_number < settings.retries:
                await asyncio.sleep(delay * (0.5 + random.random()))
                delay *= 2
                continue
            reason += f" (after {settings.retries + 1} attempts)"
        except Exception as exc:  # the agent's own failure: isolate it to this case
            reason = one_line(exc)
            break
    return CaseRun(job.eval_set_id, job.case.eval_id, job.run, None, reason, time.monotonic() - started)


async def run_jobs(
    jobs: Sequence[Job],
    settings: RunnerSettings,
    *,
    quiet: bool = False,
    stop: asyncio.Event | None = None,
    admit: Callable[[Job], str | None] | None = None,
    finished: Callable[[CaseRun], None] | None = None,
) -> tuple[list[CaseRun], str | None]:
    """Returns one CaseRun per job, in job order, and why the job stopped early (None if it finished).
    `admit`, asked as each job is about to start, may refuse it with a reason (a spending limit); `finished`
    sees every run that did start."""
    progress = Progress(len(jobs), quiet)
    semaphore = asyncio.Semaphore(settings.concurrency)
    results: list[CaseRun | None] = [None] * len(jobs)

    async def worker(index: int, job: Job) -> None:
        async with semaphore:
            refusal = admit(job) if admit is not None else None
            if refusal is not None:
                run = CaseRun(job.eval_set_id, job.case.eval_id, job.run, None, refusal)
            else:
                run = await attempt(job, settings)
                if finished is not None:
                    finished(run)
            results[index] = run
        progress.update(run)

    tasks = [asyncio.ensure_future(worker(i, job)) for i, job in enumerate(jobs)]
    # the whole batch, and the caller's stop signal when there is one: whichever ends first
    waiters: list[asyncio.Future[object]] = [asyncio.ensure_future(asyncio.gather(*tasks, return_exceptions=True))]
    if stop is not None:
        waiters.append(asyncio.ensure_future(stop.wait()))
    done, _ = await asyncio.wait(waiters, timeout=settings.job_timeout, return_when=asyncio.FIRST_COMPLETED)
    stopped: str | None = None
    if waiters[0] not in done:
        stopped = (
            "interrupted"
            if stop is not None and stop.is_set()
            else f"job time limit of {settings.job_timeout:g}s reached"
        )
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
    for waiter in waiters[1:]:
        waiter.cancel()
    final = [
        run if run is not None else CaseRun(job.eval_set_id, job.case.eval_id, job.run, None, f"not run: {stopped}")
        for run, job in zip(results, jobs, strict=True)
    ]
    return final, stopped
