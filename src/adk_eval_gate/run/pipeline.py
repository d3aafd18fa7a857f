"""Runs a validated plan through the stages: targets → criteria → results.

Every (case, run) of every agent goes through one bounded pool, so a slow eval set never idles the rest.
On SIGINT/SIGTERM or the job time limit, what finished is scored and written; what did not is an error
saying so, and `interrupted` is set in the results.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timezone
from types import MappingProxyType

from adk_eval_gate.config.offline import OFFLINE_LABEL, is_offline
from adk_eval_gate.core.keys import CaseKey
from adk_eval_gate.criteria.engine.criterion import MetricOutcome, SomeCriterion
from adk_eval_gate.criteria.engine.judge import Judge
from adk_eval_gate.criteria.engine.judging import JudgeJob, JudgeProgress, judge_all
from adk_eval_gate.criteria.engine.prompts import environment
from adk_eval_gate.llm.cache import LlmCache
from adk_eval_gate.llm.client import LlmClient, UsageStats
from adk_eval_gate.results.build import count, git_info, new_run_id, tool_info
from adk_eval_gate.results.provenance import with_provenance
from adk_eval_gate.results.results_format import EvalSetResult, ResultsFile, Timings
from adk_eval_gate.results.usage import agent_usage, judge_usage
from adk_eval_gate.run.adaptive import Decider
from adk_eval_gate.run.agent_job import AgentJob
from adk_eval_gate.run.assemble import ScoringInputs, eval_set_result, write_eval_history
from adk_eval_gate.run.budget import SpendingLimit
from adk_eval_gate.run.dispatch import RoundParts, dispatch
from adk_eval_gate.run.early_scores import EarlyScores
from adk_eval_gate.run.plan import Plan
from adk_eval_gate.run.rejudge import rejudge_policy
from adk_eval_gate.run.rounds import Rounds, drop_cut_extra_runs, first_round_runs, round_two
from adk_eval_gate.run.settings import cache_dir, llm_settings, runner_settings, simulation_settings
from adk_eval_gate.targets import CaseRun, Target, agent_logs, build_target
from adk_eval_gate.targets.adk_history import history_folder
from adk_eval_gate.targets.agent_host import AgentHost, hosted_agents, played_agents
from adk_eval_gate.targets.host_pool import AgentHostPool
from adk_eval_gate.targets.host_timeouts import host_timeouts
from adk_eval_gate.targets.runner import RunnerSettings


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


async def _judge_round(
    plan: Plan,
    judge: Judge,
    jobs: list[AgentJob],
    runs: list[CaseRun],
    criteria: Mapping[tuple[str, str], tuple[SomeCriterion, ...]],
    quiet: bool,
) -> dict[CaseKey, dict[tuple[int, str], MetricOutcome]]:
    judge_jobs = [
        JudgeJob(CaseKey(job.agent, job.eval_set_id, job.case.eval_id), job.case, run, criterion)
        for job, run in zip(jobs, runs, strict=True)
        if run.ok
        for criterion in criteria[(job.agent, job.eval_set_id)]
        if criterion.spec.judge_scorer is not None
    ]
    if not judge_jobs:
        return {}
    return await judge_all(judge_jobs, judge, JudgeProgress(len(judge_jobs), judge.llm.stats, quiet))


@dataclass(frozen=True)
class _RunParts:
    """One run's parts, built once before its first round: what each step below reads. `targets`, one per agent
    of the plan, in its order; `by_agent` joins on the agent's name (unique in a config), carried by its jobs:
    never on a target's id()."""

    plan: Plan
    targets: tuple[Target, ...]
    judge: Judge
    limit: SpendingLimit | None
    by_agent: Mapping[str, Target]
    criteria: Mapping[tuple[str, str], tuple[SomeCriterion, ...]]
    decider: Decider | None
    quiet: bool


async def run_plan_async(
    plan: Plan,
    *,
    quiet: bool = False,
    settings: RunnerSettings | None = None,
    decider: Decider | None = None,
    targets: list[Target] | None = None,
    hosts: AgentHostPool | None = None,
) -> ResultsFile:
    """The run's parts → the agent host → the rounds → the scores → the results file.

    `decider` (built from the baseline) lets adaptive agents spend extra runs only where they are needed.
    `targets`, one per agent of the plan, replace the ones its config describes (AgentEvaluator's agent is a
    Python module, not a config entry). `hosts`, the command's agent hosts, may hold one warmed for this plan's
    agents; without it (or a warm one) the run starts its own and waits for it before returning."""
    started_at, start = _now(), time.perf_counter()
    settings = settings or runner_settings(plan)
    parts = _parts(plan, quiet, decider, targets)
    host, own_host = _host(parts.targets, settings, hosts)
    history_agents = frozenset(a.name for a in plan.agents if history_folder(a.agent, plan.workflow.base_dir))
    if host is not None:
        host.writes_history = bool(history_agents)
    runs_per_case = [first_round_runs(agent, decider) for agent in plan.agents]
    early = EarlyScores(plan, runs_per_case, decider is not None, parts.judge.llm.settings.prices)
    # However the run ends, the host is told (or it would wait for more requests, and whoever waits on it with it)
    try:
        logs = agent_logs.RepeatCollapser()
        round_parts = RoundParts(parts.by_agent, settings, quiet, host, logs, parts.limit, history_agents, early)
        rounds, inference_seconds = await _rounds(parts, round_parts)
        scoring_start = time.perf_counter()
        eval_set_results = _scored(parts, rounds, early)
        await write_eval_history(plan, eval_set_results, host)
    finally:
        parts.judge.close()  # the run's metric process (the pull request's code) ends with the run
        if host is not None:
            await host.release()
            if own_host:
                await asyncio.get_running_loop().run_in_executor(None, host.wait)
    finished = time.perf_counter()
    timings = Timings(
        started_at=started_at,
        finished_at=_now(),
        duration_seconds=round(finished - start, 6),
        inference_seconds=round(inference_seconds, 6),
        scoring_seconds=round(finished - scoring_start, 6),
    )
    return _results_file(parts, rounds, eval_set_results, timings)


def _parts(plan: Plan, quiet: bool, decider: Decider | None, targets: list[Target] | None) -> _RunParts:
    if targets is None:
        targets = [
            build_target(agent.agent, plan.workflow.base_dir, simulation_settings(plan, agent)) for agent in plan.agents
        ]
    llm = LlmClient(llm_settings(plan), LlmCache(cache_dir(plan)))
    max_cost = plan.workflow.settings.run.max_cost_usd
    limit = SpendingLimit(max_cost, llm.settings.prices) if max_cost is not None else None
    rejudge = rejudge_policy(plan.workflow.settings.run.rejudge, limit, llm)
    judge = Judge(llm, environment(plan.workflow.judge_template_dir), rejudge=rejudge)
    by_agent = MappingProxyType({agent.name: target for agent, target in zip(plan.agents, targets, strict=True)})
    criteria = MappingProxyType(
        {(agent.name, s.eval_set_id): s.criteria for agent in plan.agents for s in agent.eval_sets}
    )
    return _RunParts(plan, tuple(targets), judge, limit, by_agent, criteria, decider, quiet)


def _host(
    targets: tuple[Target, ...], settings: RunnerSettings, hosts: AgentHostPool | None
) -> tuple[AgentHost | None, bool]:
    """The agent host for the agents it can run: the command's warm one, or one of the run's own (True)."""
    agents = hosted_agents(list(targets), settings.workers)
    host, own_host = hosts.take(agents) if hosts is not None else None, False
    if host is None and agents:
        timeouts = hosts.timeouts if hosts is not None else host_timeouts()
        host, own_host = AgentHost.start(agents, timeouts, played=played_agents(list(targets))), True
    return host, own_host


async def _rounds(parts: _RunParts, round_parts: RoundParts) -> tuple[Rounds, float]:
    """The first round, then a second where the decider asks for one; the targets started in this process closed
    however it ends. Returns the rounds and the seconds spent running agents."""
    plan, decider = parts.plan, parts.decider
    rounds, inference_seconds = Rounds(), 0.0
    started: list[Target] = []  # this process's targets, started by the first round that needs them
    handler = agent_logs.install(round_parts.logs.add)  # for agents run in this process
    try:
        round_jobs, round_number = _first_jobs(parts), 1
        while round_jobs:
            round_start = time.perf_counter()
            runs, stopped = await dispatch(round_parts, round_jobs, started, round_number)
            inference_seconds += time.perf_counter() - round_start
            if round_number > 1:  # extra runs the spending limit cut are left out: the first round stands
                round_jobs, runs = drop_cut_extra_runs(round_jobs, runs, rounds.sampling)
            judged = await _judge_round(plan, parts.judge, round_jobs, runs, parts.criteria, parts.quiet)
            if parts.limit is not None:
                parts.limit.record_judges(_judge_total(parts.judge))
            rounds.add(round_jobs, runs, judged)
            rounds.stopped = rounds.stopped or stopped
            if stopped is not None or decider is None or rounds.sampling:
                break
            round_jobs, round_number = round_two(plan, parts.by_agent, rounds, decider), 2
    finally:
        for target in started:
            await target.aclose()
        agent_logs.uninstall(handler)
        round_parts.logs.summarise()
    return rounds, inference_seconds


def _first_jobs(parts: _RunParts) -> list[AgentJob]:
    return [
        AgentJob(target, eval_set.eval_set_id, case, run, agent.name)
        for agent, target in zip(parts.plan.agents, parts.targets, strict=True)
        for eval_set in agent.eval_sets
        for case in eval_set.file.eval_set.eval_cases
        for run in range(first_round_runs(agent, parts.decider))
    ]


def _scored(parts: _RunParts, rounds: Rounds, early: EarlyScores) -> list[EvalSetResult]:
    """Each eval set's cases scored over their runs."""
    by_agent_runs = rounds.by_case()
    scoring = ScoringInputs(rounds.judged, rounds.sampling, parts.judge.llm.settings.prices, early)
    return [
        eval_set_result(parts.plan, agent, eval_set, target, by_agent_runs[agent.name][eval_set.eval_set_id], scoring)
        for agent, target in zip(parts.plan.agents, parts.targets, strict=True)
        for eval_set in agent.eval_sets
    ]


def _results_file(
    parts: _RunParts, rounds: Rounds, eval_set_results: list[EvalSetResult], timings: Timings
) -> ResultsFile:
    plan, limit, prices = parts.plan, parts.limit, parts.judge.llm.settings.prices
    by_agent_runs = rounds.by_case()
    not_run = sum(c.status == "not_run" for s in eval_set_results for c in s.cases)
    results = ResultsFile(
        tool=tool_info(),
        git=git_info(plan.workflow.base_dir),
        run_id=new_run_id(),
        config_file=plan.workflow.path.name,
        interrupted=rounds.stopped is not None,
        stop_reason=rounds.stopped,
        budget=limit.summary(not_run) if limit is not None else None,
        timings=timings,
        judge=judge_usage(parts.judge.llm.stats),
        agent_usage={
            agent.name: agent_usage(
                (run for sets in by_agent_runs[agent.name].values() for runs in sets.values() for run in runs),
                prices,
            )
            for agent in plan.agents
        },
        offline=OFFLINE_LABEL if is_offline(plan.workflow) else None,
        summary=count(c.status for s in eval_set_results for c in s.cases),
        eval_sets=eval_set_results,
    )
    # what scored it besides the code: judges (and the versions that answered), served models, scoring libraries
    return with_provenance(results, {name: stats.served for name, stats in parts.judge.llm.stats.items()})


def _judge_total(judge: Judge) -> UsageStats:
    return UsageStats.total(judge.llm.stats.values())


def run_plan(
    plan: Plan, *, quiet: bool = False, decider: Decider | None = None, hosts: AgentHostPool | None = None
) -> ResultsFile:
    return asyncio.run(run_plan_async(plan, quiet=quiet, decider=decider, hosts=hosts))
