"""One round of jobs through the agents: agents the agent host can run go to worker processes it forks, every
other job shares one pool in this process; SIGINT/SIGTERM stop it cleanly."""

from __future__ import annotations

import asyncio
import signal
from collections.abc import Callable, Mapping
from contextlib import contextmanager
from dataclasses import replace
from typing import cast

from adk_eval_gate.run.agent_job import AgentJob
from adk_eval_gate.run.budget import SpendingLimit
from adk_eval_gate.run.early_scores import EarlyScores
from adk_eval_gate.run.settings import worker_count
from adk_eval_gate.targets import CaseRun, Target, agent_logs
from adk_eval_gate.targets.agent_host import AgentHost, host_agent
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


def _both(first: Callable[[CaseRun], None] | None, second: Callable[[CaseRun], None] | None):
    if first is None or second is None:
        return first or second

    def both(run: CaseRun) -> None:
        first(run)
        second(run)

    return both


async def dispatch(
    targets: Mapping[str, Target],
    jobs: list[AgentJob],
    settings: RunnerSettings,
    quiet: bool,
    started: list[Target],
    host: AgentHost | None,
    logs: agent_logs.RepeatCollapser,
    *,
    limit: SpendingLimit | None = None,
    round_number: int = 1,
    history_agents: frozenset[str] = frozenset(),
    early: EarlyScores | None = None,
) -> tuple[list[CaseRun], str | None]:
    """Agents the agent host can run go to worker processes forked by it (one pool per agent); every other job
    shares one pool in this process. Targets started here stay started for later rounds (`started`); the
    caller closes them. A spending limit admits each job, wherever it runs, as it starts; `early` scores what
    worker processes send as it arrives. `targets`: each agent's, by the name its jobs carry; `history_agents`: the
    agents whose runs are written to their ADK history folder (tagged with the agent's name)."""
    admit = finished = None
    if limit is not None:

        def admit(job: Job) -> str | None:
            # the runner hands back the jobs it was given: this round's AgentJobs
            return limit.admit((cast(AgentJob, job).agent, job.eval_set_id, job.case.eval_id, round_number))

        finished = limit.record_run
    # the host when its workers can run agents; else the agent's own error is raised here, in the run
    hosted = host if host is not None and await host.preload_error() is None else None
    pooled: list[tuple[str, Target, list[int]]] = []
    local: list[int] = []
    for agent, target in targets.items():
        indices = [i for i, job in enumerate(jobs) if job.agent == agent]
        if hosted and indices and host_agent(target) is not None:
            pooled.append((agent, target, indices))
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

    # One `run.concurrency` for the whole run, however many pools share it (a user's limit may be a model's).
    parts = split_concurrency(settings.concurrency, [len(i) for _, _, i in pooled] + ([len(local)] if local else []))
    with _stop_on_signals(stop):
        groups = [
            run_group(
                run_jobs_in_workers(
                    host,
                    target,
                    [jobs[i] for i in indices],
                    replace(settings, concurrency=part),
                    worker_count(replace(settings, concurrency=part), len(indices)),
                    quiet=quiet,
                    stop_event=stop,
                    logs=logs,
                    admit=admit,
                    finished=_both(finished, early.recorder(agent) if early is not None else None),
                    history_tag=agent if agent in history_agents else None,
                ),
                indices,
            )
            for (agent, target, indices), part in zip(pooled, parts, strict=False)
            if host is not None  # always so: only a host's targets are pooled
        ]
        local_targets = {jobs[i].agent: jobs[i].target for i in local}

        async def run_local():
            for target in local_targets.values():
                if all(target is not t for t in started):
                    await target.start()
                    started.append(target)
            own = replace(settings, concurrency=parts[-1])
            return await run_jobs([jobs[i] for i in local], own, quiet=quiet, stop=stop, admit=admit, finished=finished)

        if local:
            groups.append(run_group(run_local(), local))
        await asyncio.gather(*groups)
    return [r for r in results if r is not None], (reasons[0] if reasons else None)
