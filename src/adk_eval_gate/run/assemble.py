"""The results of a run, assembled from its rounds: each case scored over all its runs, each eval set
summarised; and the same results as ADK eval history, for `adk web`."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from adk_eval_gate.config.workflow_settings import AdaptiveRuns
from adk_eval_gate.core.keys import CaseKey
from adk_eval_gate.llm.prices import PriceTable
from adk_eval_gate.results.build import count, criteria_config
from adk_eval_gate.results.eval_history import case_results
from adk_eval_gate.results.results_format import EvalSetResult, RunRange, Sampling
from adk_eval_gate.run.early_scores import EarlyScores, Judged, case_entry
from adk_eval_gate.run.plan import AgentRunPlan, EvalSetPlan, Plan
from adk_eval_gate.targets import CaseRun, Target
from adk_eval_gate.targets.adk_history import history_folder, write_history_or_warn
from adk_eval_gate.targets.agent_host import AgentHost


@dataclass(frozen=True)
class ScoringInputs:
    """What scores a case besides its runs, the same for every eval set of a run: the judges' scores and the
    adaptive sampling (by case key), the prices, and the cases scored as their last run arrived (`early`)."""

    judged: Mapping[CaseKey, Judged]
    sampling: Mapping[CaseKey, Sampling]
    prices: PriceTable
    early: EarlyScores | None = None


def eval_set_result(
    plan: Plan,
    agent: AgentRunPlan,
    eval_set: EvalSetPlan,
    target: Target,
    runs: dict[str, list[CaseRun]],
    scoring: ScoringInputs,
) -> EvalSetResult:
    judged, sampling, prices, early = scoring.judged, scoring.sampling, scoring.prices, scoring.early
    cases = [
        (early and early.get(agent.name, eval_set.eval_set_id, case.eval_id, runs[case.eval_id]))
        or case_entry(
            case,
            runs[case.eval_id],
            eval_set.criteria,
            judged.get(CaseKey(agent.name, eval_set.eval_set_id, case.eval_id)),
            sampling.get(CaseKey(agent.name, eval_set.eval_set_id, case.eval_id)),
            prices,
        )
        for case in eval_set.file.eval_set.eval_cases
    ]
    num_runs = agent.num_runs
    adaptive = RunRange(min=num_runs.min, max=num_runs.max) if isinstance(num_runs, AdaptiveRuns) else None
    most_runs = num_runs.max if isinstance(num_runs, AdaptiveRuns) else num_runs
    return EvalSetResult(
        agent=agent.name,
        eval_set_id=eval_set.eval_set_id,
        file=plan.relative(eval_set.file.path),
        shape=eval_set.file.shape,
        criteria_source=eval_set.criteria_source,
        criteria=criteria_config(eval_set.criteria),
        num_runs=most_runs,
        adaptive_runs=adaptive if any(c.sampling for c in cases) else None,
        target=target.kind,
        summary=count(c.status for c in cases),
        cases=cases,
    )


async def write_eval_history(plan: Plan, eval_set_results: list[EvalSetResult], host: AgentHost | None) -> None:
    """ADK eval history for `adk web`: by the agent host when there is one (it has google-adk loaded and does it
    while this process writes the results), else here."""
    for agent in plan.agents:
        folder = history_folder(agent.agent, plan.workflow.base_dir)
        if folder is None:
            continue
        for eval_set in agent.eval_sets:
            result = next(
                r for r in eval_set_results if r.agent == agent.name and r.eval_set_id == eval_set.eval_set_id
            )
            cases = case_results(
                result,
                {c.eval_id: c for c in eval_set.file.eval_set.eval_cases},
                tag=agent.name,
                held=host.held if host is not None else frozenset(),
            )
            if host is not None:
                await host.write_history(agent.name, folder, result.eval_set_id, cases)
            else:
                write_history_or_warn(agent.name, folder, result.eval_set_id, cases)
