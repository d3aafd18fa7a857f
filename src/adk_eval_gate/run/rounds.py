"""Adaptive runs: what every round produced, how many runs each case gets at once, and the cases the decider
sends to a second round."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field

from adk_eval_gate.config.workflow_settings import AdaptiveRuns
from adk_eval_gate.core.keys import CaseKey
from adk_eval_gate.criteria.engine.criterion import MetricOutcome
from adk_eval_gate.criteria.engine.scoring import score_case
from adk_eval_gate.results.build import case_result, criteria_config
from adk_eval_gate.results.results_format import Sampling
from adk_eval_gate.run.adaptive import Decider
from adk_eval_gate.run.agent_job import AgentJob
from adk_eval_gate.run.budget import NOT_RUN_PREFIX
from adk_eval_gate.run.plan import AgentRunPlan, Plan
from adk_eval_gate.targets import CaseRun, Target


@dataclass
class Rounds:
    """What every round so far produced, and what the run decided about each case's runs."""

    jobs: list[AgentJob] = field(default_factory=list)
    runs: list[CaseRun] = field(default_factory=list)
    judged: dict[CaseKey, dict[tuple[int, str], MetricOutcome]] = field(default_factory=dict)  # as judge_all gives
    sampling: dict[CaseKey, Sampling] = field(default_factory=dict)
    stopped: str | None = None

    def add(
        self,
        jobs: list[AgentJob],
        runs: list[CaseRun],
        judged: Mapping[CaseKey, Mapping[tuple[int, str], MetricOutcome]],
    ) -> None:
        self.jobs += jobs
        self.runs += runs
        for key, outcomes in judged.items():
            self.judged.setdefault(key, {}).update(outcomes)

    def by_case(self) -> dict[str, dict[str, dict[str, list[CaseRun]]]]:
        """Agent name → eval set → case → its runs, in run order."""
        grouped: dict[str, dict[str, dict[str, list[CaseRun]]]] = defaultdict(
            lambda: defaultdict(lambda: defaultdict(list))
        )
        for job, run in zip(self.jobs, self.runs, strict=True):
            grouped[job.agent][job.eval_set_id][job.case.eval_id].append(run)
        for sets in grouped.values():
            for cases in sets.values():
                for runs in cases.values():
                    runs.sort(key=lambda r: r.run)
        return grouped


def first_round_runs(agent: AgentRunPlan, decider: Decider | None) -> int:
    """Runs every case gets at once. Adaptive agents: `min` when a decider will look at them, else `max` (a push
    run builds the baseline every pull request is compared with: it gets every run)."""
    runs = agent.num_runs
    if isinstance(runs, AdaptiveRuns):
        return runs.min if decider is not None else runs.max
    return runs


def round_two(plan: Plan, targets: Mapping[str, Target], rounds: Rounds, decider: Decider) -> list[AgentJob]:
    """Scores the first round of every adaptive agent and asks the decider which cases need more runs.
    `targets`: each agent's, by name."""
    by_case = rounds.by_case()
    extra: list[AgentJob] = []
    for agent in plan.agents:
        runs = agent.num_runs
        if not isinstance(runs, AdaptiveRuns):
            continue
        for eval_set in agent.eval_sets:
            criteria = criteria_config(eval_set.criteria)
            for case in eval_set.file.eval_set.eval_cases:
                case_runs = by_case[agent.name][eval_set.eval_set_id][case.eval_id]
                key = CaseKey(agent.name, eval_set.eval_set_id, case.eval_id)
                first = case_result(
                    case, score_case(case, case_runs, eval_set.criteria, rounds.judged.get(key)), case_runs
                )
                sampling = decider.decide(agent.name, eval_set.eval_set_id, criteria, first, runs.min, runs.max)
                rounds.sampling[key] = sampling
                if sampling.extra is not None:
                    target = targets[agent.name]
                    extra += [
                        AgentJob(target, eval_set.eval_set_id, case, run, agent.name) for run in sampling.extra.runs
                    ]
    return extra


def drop_cut_extra_runs(
    jobs: list[AgentJob], runs: list[CaseRun], sampling: dict[CaseKey, Sampling]
) -> tuple[list[AgentJob], list[CaseRun]]:
    kept_jobs, kept_runs = [], []
    for job, run in zip(jobs, runs, strict=True):
        if run.error is not None and run.error.startswith(NOT_RUN_PREFIX):
            extra = sampling[CaseKey(job.agent, job.eval_set_id, job.case.eval_id)].extra
            if extra is not None and job.run in extra.runs:
                extra.runs.remove(job.run)
                if "; cut: " not in extra.reason:
                    extra.reason += f"; cut: {run.error}"
            continue
        kept_jobs.append(job)
        kept_runs.append(run)
    return kept_jobs, kept_runs
