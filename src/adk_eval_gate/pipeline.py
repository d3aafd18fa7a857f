"""Runs a validated plan through the stages: targets → criteria → results.

Every (case, run) of every agent goes through one bounded pool, so a slow eval set never idles the rest.
On SIGINT/SIGTERM or the job time limit, what finished is scored and written; what did not is an error
saying so, and `interrupted` is set in the results.
"""

from __future__ import annotations

import asyncio
import os
import signal
import time
from collections import defaultdict
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from .config.models import AdaptiveRuns
from .criteria.judge import Judge
from .criteria.judge_progress import JudgeProgress
from .criteria.judging import JudgeJob, judge_all
from .criteria.prompts import environment
from .criteria.scoring import score_case
from .efficiency.usage import run_usage
from .evalsets.models import EvalCase
from .llm.cache import LlmCache
from .llm.client import LlmClient, LlmSettings, UsageStats
from .llm.prices import Price, PriceTable
from .plan import AgentRunPlan, EvalSetPlan, Plan
from .results.build import case_result, count, criteria_config, git_info, tool_info
from .results.models import CaseResult, EvalSetResult, ResultsFile, RunRange, Sampling, Timings
from .results.usage import agent_usage, judge_usage
from .sampling.budget import NOT_RUN_PREFIX, SpendingLimit
from .sampling.decider import Decider
from .targets import CaseRun, Target, agent_logs, build_target
from .targets.agent_host import AgentHost, hosted_agents, take_warm_host
from .targets.eval_history import case_results, history_folder, write_history_or_warn
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


def _case(case: EvalCase, runs: list[CaseRun], criteria, judged: dict | None, sampling: Sampling | None,
          prices: PriceTable) -> CaseResult:
    result = case_result(case, score_case(case, runs, criteria, judged), runs)
    for record, run in zip(result.runs, runs, strict=True):
        record.usage = run_usage(run, prices)
    result.sampling = sampling
    refused = [run for run in runs if run.error is not None and run.error.startswith(NOT_RUN_PREFIX)]
    if refused and len(refused) == len(runs):
        result.status, result.reason = "not_run", refused[0].error
    return result


def _eval_set_result(plan: Plan, agent: AgentRunPlan, eval_set: EvalSetPlan, target: Target,
                     runs: dict[str, list[CaseRun]], judged: dict, sampling: dict, prices: PriceTable) -> EvalSetResult:
    cases = [
        _case(case, runs[case.eval_id], eval_set.criteria, judged.get((agent.name, eval_set.eval_set_id, case.eval_id)),
              sampling.get((agent.name, eval_set.eval_set_id, case.eval_id)), prices)
        for case in eval_set.file.eval_set.eval_cases
    ]
    num_runs = agent.num_runs
    adaptive = RunRange(min=num_runs.min, max=num_runs.max) if isinstance(num_runs, AdaptiveRuns) else None
    return EvalSetResult(
        agent=agent.name,
        eval_set_id=eval_set.eval_set_id,
        file=plan.relative(eval_set.file.path),
        shape=eval_set.file.shape,
        criteria_source=eval_set.criteria_source,
        criteria=criteria_config(eval_set.criteria),
        num_runs=num_runs.max if adaptive else num_runs,
        adaptive_runs=adaptive if any(c.sampling for c in cases) else None,
        target=target.kind,
        summary=count(c.status for c in cases),
        cases=cases,
    )


@dataclass
class _Rounds:
    """What every round so far produced, and what the run decided about each case's runs."""

    jobs: list[Job] = field(default_factory=list)
    runs: list[CaseRun] = field(default_factory=list)
    judged: dict = field(default_factory=dict)
    sampling: dict[tuple[str, str, str], Sampling] = field(default_factory=dict)
    stopped: str | None = None

    def add(self, jobs: list[Job], runs: list[CaseRun], judged: dict) -> None:
        self.jobs += jobs
        self.runs += runs
        for key, outcomes in judged.items():
            self.judged.setdefault(key, {}).update(outcomes)

    def by_case(self) -> dict[int, dict[str, dict[str, list[CaseRun]]]]:
        grouped: dict = defaultdict(lambda: defaultdict(lambda: defaultdict(list)))
        for job, run in zip(self.jobs, self.runs, strict=True):
            grouped[id(job.target)][job.eval_set_id][job.case.eval_id].append(run)
        for sets in grouped.values():
            for cases in sets.values():
                for runs in cases.values():
                    runs.sort(key=lambda r: r.run)
        return grouped


async def _dispatch(targets: list[Target], jobs: list[Job], settings: RunnerSettings, quiet: bool,
                    started: list[Target], host: AgentHost | None, logs: agent_logs.RepeatCollapser, *,
                    limit: SpendingLimit | None = None, round_number: int = 1,
                    history_tags: dict[int, str] | None = None) -> tuple[list[CaseRun], str | None]:
    """Agents the agent host can run go to worker processes forked by it (one pool per agent); every other job
    shares one pool in this process. Targets started here stay started for later rounds (`started`); the
    caller closes them. A spending limit admits each job, wherever it runs, as it starts."""
    admit = finished = None
    if limit is not None:
        def admit(job: Job) -> str | None:
            return limit.admit((id(job.target), job.eval_set_id, job.case.eval_id, round_number))

        finished = limit.record_run
    hosted = host is not None and await host.preload_error() is None  # else the agent's own error, raised here
    pooled: list[tuple[Target, list[int]]] = []
    local: list[int] = []
    for target in targets:
        indices = [i for i, job in enumerate(jobs) if job.target is target]
        if hosted and indices and getattr(target, "host_agent", lambda: None)() is not None:
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
        groups = [
            run_group(run_jobs_in_workers(host, target, [jobs[i] for i in indices], settings,
                                          worker_count(settings, len(indices)), quiet=quiet, stop_event=stop,
                                          logs=logs, admit=admit, finished=finished,
                                          history_tag=(history_tags or {}).get(id(target))), indices)
            for target, indices in pooled
        ]
        local_targets = {id(jobs[i].target): jobs[i].target for i in local}

        async def run_local():
            for target in local_targets.values():
                if all(target is not t for t in started):
                    await target.start()
                    started.append(target)
            return await run_jobs([jobs[i] for i in local], settings, quiet=quiet, stop=stop, admit=admit,
                                  finished=finished)

        if local:
            groups.append(run_group(run_local(), local))
        await asyncio.gather(*groups)
    return [r for r in results if r is not None], (reasons[0] if reasons else None)


def first_round_runs(agent: AgentRunPlan, decider: Decider | None) -> int:
    """Runs every case gets at once. Adaptive agents: `min` when a decider will look at them, else `max` (a push
    run builds the baseline every pull request is compared with: it gets every run)."""
    runs = agent.num_runs
    if isinstance(runs, AdaptiveRuns):
        return runs.min if decider is not None else runs.max
    return runs


async def _judge_round(plan: Plan, judge: Judge, jobs: list[Job], runs: list[CaseRun], names: dict[int, str],
                       criteria: dict[tuple[int, str], tuple], quiet: bool) -> dict:
    judge_jobs = [
        JudgeJob((names[id(job.target)], job.eval_set_id, job.case.eval_id), job.case, run, criterion)
        for job, run in zip(jobs, runs, strict=True) if run.ok
        for criterion in criteria[(id(job.target), job.eval_set_id)] if criterion.spec.judge_scorer is not None
    ]
    if not judge_jobs:
        return {}
    return await judge_all(judge_jobs, judge, JudgeProgress(len(judge_jobs), judge.llm.stats, quiet))


def _round_two(plan: Plan, targets: list[Target], rounds: _Rounds, decider: Decider) -> list[Job]:
    """Scores the first round of every adaptive agent and asks the decider which cases need more runs."""
    by_case = rounds.by_case()
    extra: list[Job] = []
    for agent, target in zip(plan.agents, targets, strict=True):
        runs = agent.num_runs
        if not isinstance(runs, AdaptiveRuns):
            continue
        for eval_set in agent.eval_sets:
            criteria = criteria_config(eval_set.criteria)
            for case in eval_set.file.eval_set.eval_cases:
                case_runs = by_case[id(target)][eval_set.eval_set_id][case.eval_id]
                key = (agent.name, eval_set.eval_set_id, case.eval_id)
                first = case_result(case, score_case(case, case_runs, eval_set.criteria, rounds.judged.get(key)), case_runs)
                sampling = decider.decide(agent.name, eval_set.eval_set_id, criteria, first, runs.min, runs.max)
                rounds.sampling[key] = sampling
                if sampling.extra is not None:
                    extra += [Job(target, eval_set.eval_set_id, case, run) for run in sampling.extra.runs]
    return extra


async def run_plan_async(plan: Plan, *, quiet: bool = False, settings: RunnerSettings | None = None,
                         decider: Decider | None = None, targets: list[Target] | None = None) -> ResultsFile:
    """`decider` (built from the baseline) lets adaptive agents spend extra runs only where they are needed.
    `targets`, one per agent of the plan, replace the ones its config describes (AgentEvaluator's agent is a
    Python module, not a config entry)."""
    started_at, start = _now(), time.perf_counter()
    settings = settings or runner_settings(plan)
    if targets is None:
        targets = [build_target(agent.agent, plan.workflow.base_dir, simulation_settings(plan, agent))
                   for agent in plan.agents]
    judge = Judge(LlmClient(llm_settings(plan), LlmCache(_cache_dir(plan))), environment(plan.workflow.judge_template_dir))
    max_cost = plan.workflow.settings.run.max_cost_usd
    limit = SpendingLimit(max_cost, judge.llm.settings.prices) if max_cost is not None else None
    names = {id(target): agent.name for agent, target in zip(plan.agents, targets, strict=True)}
    criteria = {(id(target), s.eval_set_id): s.criteria for agent, target in zip(plan.agents, targets, strict=True)
                for s in agent.eval_sets}
    first_jobs = [
        Job(target, eval_set.eval_set_id, case, run)
        for agent, target in zip(plan.agents, targets, strict=True)
        for eval_set in agent.eval_sets
        for case in eval_set.file.eval_set.eval_cases
        for run in range(first_round_runs(agent, decider))
    ]
    rounds = _Rounds()
    started: list[Target] = []
    inference_seconds = 0.0
    host, own_host = take_warm_host(), False
    if host is None and (agents := hosted_agents(targets, settings.workers)):
        host, own_host = AgentHost.start(agents), True
    tags = {id(t): a.name for a, t in zip(plan.agents, targets, strict=True) if history_folder(a.agent, plan.workflow.base_dir)}
    if host is not None:
        host.writes_history = bool(tags)
    logs = agent_logs.RepeatCollapser()
    handler = agent_logs.install(logs.add)  # for agents run in this process
    try:
        round_jobs, round_number = first_jobs, 1
        while round_jobs:
            round_start = time.perf_counter()
            runs, stopped = await _dispatch(targets, round_jobs, settings, quiet, started, host, logs, limit=limit,
                                            round_number=round_number, history_tags=tags)
            inference_seconds += time.perf_counter() - round_start
            if round_number > 1:  # extra runs the spending limit cut are left out: the first round stands
                round_jobs, runs = _drop_cut_extra_runs(round_jobs, runs, rounds.sampling, names)
            judged = await _judge_round(plan, judge, round_jobs, runs, names, criteria, quiet)
            if limit is not None:
                limit.record_judges(_judge_total(judge))
            rounds.add(round_jobs, runs, judged)
            rounds.stopped = rounds.stopped or stopped
            if stopped is not None or decider is None or rounds.sampling:
                break
            round_jobs, round_number = _round_two(plan, targets, rounds, decider), 2
    finally:
        for target in started:
            await target.aclose()
        agent_logs.uninstall(handler)
        logs.summarise()
    scoring_start = time.perf_counter()
    by_target = rounds.by_case()
    eval_set_results = [
        _eval_set_result(plan, agent, eval_set, target, by_target[id(target)][eval_set.eval_set_id], rounds.judged,
                         rounds.sampling, judge.llm.settings.prices)
        for agent, target in zip(plan.agents, targets, strict=True)
        for eval_set in agent.eval_sets
    ]
    await _write_eval_history(plan, eval_set_results, host)
    if host is not None:
        await host.release()
        if own_host:
            await asyncio.get_running_loop().run_in_executor(None, host.wait)
    finished = time.perf_counter()
    not_run = sum(c.status == "not_run" for s in eval_set_results for c in s.cases)
    return ResultsFile(
        tool=tool_info(),
        git=git_info(plan.workflow.base_dir),
        config_file=plan.workflow.path.name,
        interrupted=rounds.stopped is not None,
        stop_reason=rounds.stopped,
        budget=limit.summary(not_run) if limit is not None else None,
        timings=Timings(
            started_at=started_at,
            finished_at=_now(),
            duration_seconds=round(finished - start, 6),
            inference_seconds=round(inference_seconds, 6),
            scoring_seconds=round(finished - scoring_start, 6),
        ),
        judge=judge_usage(judge.llm.stats),
        agent_usage={agent.name: agent_usage((run for sets in by_target[id(target)].values() for runs in sets.values()
                                               for run in runs), judge.llm.settings.prices)
                     for agent, target in zip(plan.agents, targets, strict=True)},
        summary=count(c.status for s in eval_set_results for c in s.cases),
        eval_sets=eval_set_results,
    )


async def _write_eval_history(plan: Plan, eval_set_results: list[EvalSetResult], host: AgentHost | None) -> None:
    """ADK eval history for `adk web`: by the agent host when there is one (it has google-adk loaded and does it
    while this process writes the results), else here."""
    for agent in plan.agents:
        folder = history_folder(agent.agent, plan.workflow.base_dir)
        if folder is None:
            continue
        for eval_set in agent.eval_sets:
            result = next(r for r in eval_set_results if r.agent == agent.name and r.eval_set_id == eval_set.eval_set_id)
            cases = case_results(result, {c.eval_id: c for c in eval_set.file.eval_set.eval_cases}, tag=agent.name,
                                 held=host.held if host is not None else frozenset())
            if host is not None:
                await host.write_history(agent.name, folder, result.eval_set_id, cases)
            else:
                write_history_or_warn(agent.name, folder, result.eval_set_id, cases)


def _drop_cut_extra_runs(jobs: list[Job], runs: list[CaseRun], sampling: dict[tuple[str, str, str], Sampling],
                         names: dict[int, str]) -> tuple[list[Job], list[CaseRun]]:
    kept_jobs, kept_runs = [], []
    for job, run in zip(jobs, runs, strict=True):
        if run.error is not None and run.error.startswith(NOT_RUN_PREFIX):
            extra = sampling[(names[id(job.target)], job.eval_set_id, job.case.eval_id)].extra
            if extra is not None and job.run in extra.runs:
                extra.runs.remove(job.run)
                if "; cut: " not in extra.reason:
                    extra.reason += f"; cut: {run.error}"
            continue
        kept_jobs.append(job)
        kept_runs.append(run)
    return kept_jobs, kept_runs


def _judge_total(judge: Judge) -> UsageStats:
    total = UsageStats()
    for stats in judge.llm.stats.values():
        total.add(stats)
    return total


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


def run_plan(plan: Plan, *, quiet: bool = False, decider: Decider | None = None) -> ResultsFile:
    return asyncio.run(run_plan_async(plan, quiet=quiet, decider=decider))
