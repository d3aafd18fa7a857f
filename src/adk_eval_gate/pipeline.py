"""Runs a validated plan through the stages: targets → criteria → results.

Every (case, run) of every agent goes through one bounded pool, so a slow eval set never idles the rest.
On SIGINT/SIGTERM or the job time limit, what finished is scored and written; what did not is an error
saying so, and `interrupted` is set in the results.
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import time
from collections import defaultdict
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path

from .criteria.judge import Judge
from .criteria.judge_progress import JudgeProgress
from .criteria.judging import JudgeJob, judge_all
from .criteria.prompts import environment
from .criteria.scoring import score_case
from .llm.cache import LlmCache
from .llm.client import LlmClient, LlmSettings
from .llm.prices import Price, PriceTable
from .plan import AgentRunPlan, EvalSetPlan, Plan
from .results.build import case_result, count, criteria_config, git_info, tool_info
from .results.models import EvalSetResult, ResultsFile, Timings
from .results.usage import agent_usage, judge_usage
from .targets import CaseRun, Target, build_target
from .targets.runner import Job, RunnerSettings, run_jobs
from .targets.simulation import SimulationSettings
from .targets.workers import run_jobs_in_workers


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def runner_settings(plan: Plan) -> RunnerSettings:
    run = plan.workflow.settings.run
    workers = None if run.workers == "auto" else run.workers
    return RunnerSettings(concurrency=run.concurrency, timeout=run.timeout, retries=run.retries,
                          job_timeout=run.job_timeout, workers=workers)


def worker_count(settings: RunnerSettings, jobs: int) -> int:
    """Worker processes pay off once there are more jobs than concurrency slots: then ADK's own CPU per model
    call, not the model's latency, bounds one event loop."""
    if settings.workers is not None:
        return settings.workers
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return min(cores, 8) if jobs > settings.concurrency else 1


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


def _eval_set_result(plan: Plan, agent: AgentRunPlan, eval_set: EvalSetPlan, target: Target,
                     runs: dict[str, list[CaseRun]], judged: dict) -> EvalSetResult:
    cases = [
        case_result(case, score_case(case, runs[case.eval_id], eval_set.criteria,
                                     judged.get((agent.name, eval_set.eval_set_id, case.eval_id))), runs[case.eval_id])
        for case in eval_set.file.eval_set.eval_cases
    ]
    return EvalSetResult(
        agent=agent.name,
        eval_set_id=eval_set.eval_set_id,
        file=plan.relative(eval_set.file.path),
        shape=eval_set.file.shape,
        criteria_source=eval_set.criteria_source,
        criteria=criteria_config(eval_set.criteria),
        num_runs=agent.num_runs,
        target=target.kind,
        summary=count(c.status for c in cases),
        cases=cases,
    )


async def _dispatch(plan: Plan, targets: list[Target], jobs: list[Job], settings: RunnerSettings,
                    quiet: bool) -> tuple[list[CaseRun], str | None]:
    """In-process agents with many jobs go to forked worker processes (one pool per agent, started first, while
    this process has no threads); every other job shares one in-process pool."""
    pooled: list[tuple[Target, list[int]]] = []
    local: list[int] = []
    for target in targets:
        indices = [i for i, job in enumerate(jobs) if job.target is target]
        preload = getattr(target, "preload", None)
        if preload is not None and worker_count(settings, len(indices)) > 1:
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
            groups.append(run_group(run_jobs_in_workers(target, group_jobs, settings, workers,
                                                        quiet=quiet, stop_event=stop), indices))
        local_targets = [t for t in targets if all(t is not p for p, _ in pooled)]

        async def run_local():
            for target in local_targets:
                await target.start()
            try:
                return await run_jobs([jobs[i] for i in local], settings, quiet=quiet, stop=stop)
            finally:
                for target in local_targets:
                    await target.aclose()

        if local:
            groups.append(run_group(run_local(), local))
        await asyncio.gather(*groups)
    return [r for r in results if r is not None], (reasons[0] if reasons else None)


async def run_plan_async(plan: Plan, *, quiet: bool = False, settings: RunnerSettings | None = None,
                         targets: list[Target] | None = None) -> ResultsFile:
    """`targets`, one per agent of the plan, replace the ones its config describes (AgentEvaluator's agent is a
    Python module, not a config entry)."""
    started_at, start = _now(), time.perf_counter()
    settings = settings or runner_settings(plan)
    if targets is None:
        targets = [build_target(agent.agent, plan.workflow.base_dir, simulation_settings(plan, agent)) for agent in plan.agents]
    jobs = [
        Job(target, eval_set.eval_set_id, case, run)
        for agent, target in zip(plan.agents, targets, strict=True)
        for eval_set in agent.eval_sets
        for case in eval_set.file.eval_set.eval_cases
        for run in range(agent.num_runs)
    ]
    runs, stopped = await _dispatch(plan, targets, jobs, settings, quiet)
    inference_done = time.perf_counter()

    by_target: dict[int, dict[str, dict[str, list[CaseRun]]]] = defaultdict(lambda: defaultdict(lambda: defaultdict(list)))
    for job, run in zip(jobs, runs, strict=True):
        by_target[id(job.target)][job.eval_set_id][job.case.eval_id].append(run)
    judge = Judge(LlmClient(llm_settings(plan), LlmCache(_cache_dir(plan))), environment(plan.workflow.judge_template_dir))
    judge_jobs = [
        JudgeJob((agent.name, eval_set.eval_set_id, case.eval_id), case, run, criterion)
        for agent, target in zip(plan.agents, targets, strict=True)
        for eval_set in agent.eval_sets
        for criterion in eval_set.criteria if criterion.spec.judge_scorer is not None
        for case in eval_set.file.eval_set.eval_cases
        for run in by_target[id(target)][eval_set.eval_set_id][case.eval_id] if run.ok
    ]
    progress = JudgeProgress(len(judge_jobs), judge.llm.stats, quiet)
    judged = await judge_all(judge_jobs, judge, progress) if judge_jobs else {}
    eval_set_results = [
        _eval_set_result(plan, agent, eval_set, target, by_target[id(target)][eval_set.eval_set_id], judged)
        for agent, target in zip(plan.agents, targets, strict=True)
        for eval_set in agent.eval_sets
    ]
    _write_eval_history(plan, eval_set_results)
    finished = time.perf_counter()
    return ResultsFile(
        tool=tool_info(),
        git=git_info(plan.workflow.base_dir),
        config_file=plan.workflow.path.name,
        interrupted=stopped is not None,
        stop_reason=stopped,
        timings=Timings(
            started_at=started_at,
            finished_at=_now(),
            duration_seconds=round(finished - start, 6),
            inference_seconds=round(inference_done - start, 6),
            scoring_seconds=round(finished - inference_done, 6),
        ),
        judge=judge_usage(judge.llm.stats),
        agent_usage={agent.name: agent_usage((run for sets in by_target[id(target)].values() for runs in sets.values()
                                               for run in runs), judge.llm.settings.prices)
                     for agent, target in zip(plan.agents, targets, strict=True)},
        summary=count(c.status for s in eval_set_results for c in s.cases),
        eval_sets=eval_set_results,
    )


def _write_eval_history(plan: Plan, eval_set_results: list[EvalSetResult]) -> None:
    """ADK eval history for `adk web`; a history that cannot be written is a warning, never a lost run."""
    from .targets.eval_history import history_folder, write_history

    for agent in plan.agents:
        folder = history_folder(agent.agent, plan.workflow.base_dir)
        if folder is None:
            continue
        for eval_set in agent.eval_sets:
            result = next(r for r in eval_set_results if r.agent == agent.name and r.eval_set_id == eval_set.eval_set_id)
            try:
                write_history(folder, result, {c.eval_id: c for c in eval_set.file.eval_set.eval_cases})
            except Exception as exc:  # a read-only checkout, an id ADK refuses as a file name, ...
                print(f"warning: ADK eval history for {agent.name}/{eval_set.eval_set_id} not written: {exc}",
                      file=sys.stderr)


def _cache_dir(plan: Plan) -> Path | None:
    value = plan.workflow.settings.judge.cache
    if not value:
        return None
    return Path(value) if Path(value).is_absolute() else plan.workflow.base_dir / value


def llm_settings(plan: Plan) -> LlmSettings:
    """One model-client configuration for the judges and the user simulator: the workflow's `judge:` section."""
    section = plan.workflow.settings.judge
    prices = PriceTable.with_overrides({model: Price(p.input, p.output) for model, p in section.prices.items()})
    return LlmSettings(concurrency=section.concurrency, timeout=section.timeout, retries=section.retries,
                       max_calls=section.max_calls, max_tokens=section.max_tokens, base_url=section.base_url, prices=prices)


def simulation_settings(plan: Plan, agent: AgentRunPlan) -> SimulationSettings:
    return SimulationSettings(configs={s.eval_set_id: s.user_simulator_config for s in agent.eval_sets},
                              llm=llm_settings(plan), cache_dir=_cache_dir(plan))


def run_plan(plan: Plan, *, quiet: bool = False) -> ResultsFile:
    return asyncio.run(run_plan_async(plan, quiet=quiet))
