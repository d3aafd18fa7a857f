"""One round of jobs through the agents: agents the agent host can run go to worker processes it forks, every
other job shares one pool in this process; SIGINT/SIGTERM stop it cleanly."""

from __future__ import annotations

import asyncio
import signal
from collections.abc import Awaitable, Callable, Coroutine, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, replace
from typing import Any, cast

from adk_eval_gate.run.agent_job import AgentJob
from adk_eval_gate.run.budget import SpendingLimit
from adk_eval_gate.run.early_scores import EarlyScores
from adk_eval_gate.run.settings import worker_count
from adk_eval_gate.targets import CaseRun, Target, agent_logs
from adk_eval_gate.targets.agent_host import AgentHost, host_agent
from adk_eval_gate.targets.runner import Job, RunnerSettings, run_jobs
from adk_eval_gate.targets.workers import WorkerHooks, run_jobs_in_workers


@contextmanager
def _stop_on_signals(stop: asyncio.Event) -> Iterator[None]:
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


def split_concurrency(concurrency: int, sizes: list[int]) -> list[int]:
    """Each pool's part of the run's concurrency: together no more than the whole (unless there are more pools
    than slots: each gets one), each slot going where the most jobs wait per slot, none beyond a pool's jobs."""
    parts = [1] * len(sizes)
    for _ in range(concurrency - len(sizes)):
        waiting = [i for i, size in enumerate(sizes) if size > parts[i]]
        if not waiting:
            break
        parts[max(waiting, key=lambda i: sizes[i] / parts[i])] += 1
    return parts


def _both(
    first: Callable[[CaseRun], None] | None, second: Callable[[CaseRun], None] | None
) -> Callable[[CaseRun], None] | None:
    if first is None or second is None:
        return first or second

    def both(run: CaseRun) -> None:
        first(run)
        second(run)

    return both


@dataclass(frozen=True)
class RoundParts:
    """What every round of a run dispatches with, built once per run. `targets`: each agent's, by the name its
    jobs carry; `history_agents`: the agents whose runs are written to their ADK history folder (tagged with the
    agent's name); a spending `limit` admits each job, wherever it runs, as it starts; `early` scores what worker
    processes send as it arrives."""

    targets: Mapping[str, Target]
    settings: RunnerSettings
    quiet: bool
    host: AgentHost | None
    logs: agent_logs.RepeatCollapser
    limit: SpendingLimit | None = None
    history_agents: frozenset[str] = frozenset()
    early: EarlyScores | None = None


@dataclass(frozen=True)
class _Controls:
    """What every pool of one round shares: the stop event (signals) and the spending limit's two hooks."""

    stop: asyncio.Event
    admit: Callable[[Job], str | None] | None
    finished: Callable[[CaseRun], None] | None


async def dispatch(
    parts: RoundParts, jobs: list[AgentJob], started: list[Target], round_number: int = 1
) -> tuple[list[CaseRun], str | None]:
    """Agents the agent host can run go to worker processes forked by it (one pool per agent); every other job
    shares one pool in this process. Targets started here stay started for later rounds (`started`); the
    caller closes them."""
    admit, finished = _admission(parts.limit, round_number)
    # the host when its workers can run agents; else the agent's own error is raised here, in the run
    host = parts.host
    hosted = host if host is not None and await host.preload_error() is None else None
    pooled, local = _pools(parts.targets, jobs, hosted)
    results: list[CaseRun | None] = [None] * len(jobs)
    reasons: list[str] = []
    controls = _Controls(asyncio.Event(), admit, finished)

    async def run_group(coroutine: Awaitable[tuple[list[CaseRun], str | None]], indices: list[int]) -> None:
        group_runs, reason = await coroutine
        for index, run in zip(indices, group_runs, strict=True):
            results[index] = run
        if reason:
            reasons.append(reason)

    # One `run.concurrency` for the whole run, however many pools share it (a user's limit may be a model's).
    sizes = [len(i) for _, _, i in pooled] + ([len(local)] if local else [])
    shares = split_concurrency(parts.settings.concurrency, sizes)
    with _stop_on_signals(controls.stop):
        groups = [
            run_group(_in_workers(host, parts, [jobs[i] for i in indices], agent, target, share, controls), indices)
            for (agent, target, indices), share in zip(pooled, shares, strict=False)
            if host is not None  # always so: only a host's targets are pooled
        ]
        if local:
            groups.append(run_group(_in_process(parts, [jobs[i] for i in local], started, shares[-1], controls), local))
        await asyncio.gather(*groups)
    return [r for r in results if r is not None], (reasons[0] if reasons else None)


def _admission(
    limit: SpendingLimit | None, round_number: int
) -> tuple[Callable[[Job], str | None] | None, Callable[[CaseRun], None] | None]:
    """The spending limit's hooks: admit a job as it starts, record a run as it ends (none without a limit)."""
    if limit is None:
        return None, None

    def admit(job: Job) -> str | None:
        # the runner hands back the jobs it was given: this round's AgentJobs
        return limit.admit((cast(AgentJob, job).agent, job.eval_set_id, job.case.eval_id, round_number))

    return admit, limit.record_run


def _pools(
    targets: Mapping[str, Target], jobs: list[AgentJob], hosted: AgentHost | None
) -> tuple[list[tuple[str, Target, list[int]]], list[int]]:
    """The jobs' indices per pool: one per agent the host runs, and the rest in this process."""
    pooled: list[tuple[str, Target, list[int]]] = []
    local: list[int] = []
    for agent, target in targets.items():
        indices = [i for i, job in enumerate(jobs) if job.agent == agent]
        if hosted and indices and host_agent(target) is not None:
            pooled.append((agent, target, indices))
        else:
            local.extend(indices)
    return pooled, local


def _in_workers(
    host: AgentHost,
    parts: RoundParts,
    jobs: list[AgentJob],
    agent: str,
    target: Target,
    share: int,
    controls: _Controls,
) -> Coroutine[Any, Any, tuple[list[CaseRun], str | None]]:
    """One agent's jobs in worker processes the host forks, with its share of the run's concurrency."""
    own = replace(parts.settings, concurrency=share)
    early = parts.early.recorder(agent) if parts.early is not None else None
    return run_jobs_in_workers(
        host,
        target,
        jobs,
        own,
        worker_count(own, len(jobs)),
        WorkerHooks(
            quiet=parts.quiet,
            stop_event=controls.stop,
            logs=parts.logs,
            admit=controls.admit,
            finished=_both(controls.finished, early),
            history_tag=agent if agent in parts.history_agents else None,
        ),
    )


async def _in_process(
    parts: RoundParts, jobs: list[AgentJob], started: list[Target], share: int, controls: _Controls
) -> tuple[list[CaseRun], str | None]:
    """Every other job in one pool in this process; its targets started once, for this round and the next."""
    for target in {job.agent: job.target for job in jobs}.values():
        if all(target is not t for t in started):
            await target.start()
            started.append(target)
    own = replace(parts.settings, concurrency=share)
    return await run_jobs(
        jobs, own, quiet=parts.quiet, stop=controls.stop, admit=controls.admit, finished=controls.finished
    )
