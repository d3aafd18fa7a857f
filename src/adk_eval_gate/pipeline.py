"""Runs a validated plan through the stages: targets → criteria → results."""

from __future__ import annotations

import asyncio
import time
from datetime import datetime, timezone

from .criteria.scoring import score_case
from .plan import AgentRunPlan, EvalSetPlan, Plan
from .results.build import case_result, count, criteria_config, git_info, tool_info
from .results.models import EvalSetResult, ResultsFile, Timings
from .targets import CaseRun, Target, build_target


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


async def _collect_runs(target: Target, agent: AgentRunPlan, eval_set: EvalSetPlan) -> dict[str, list[CaseRun]]:
    runs: dict[str, list[CaseRun]] = {}
    for case in eval_set.file.eval_set.eval_cases:
        runs[case.eval_id] = [await target.run_case(eval_set.eval_set_id, case, run) for run in range(agent.num_runs)]
    return runs


async def run_plan_async(plan: Plan) -> ResultsFile:
    started_at, start = _now(), time.perf_counter()
    inference = scoring = 0.0
    eval_set_results = []
    for agent in plan.agents:
        target = build_target(agent.agent)
        try:
            for eval_set in agent.eval_sets:
                t0 = time.perf_counter()
                runs = await _collect_runs(target, agent, eval_set)
                t1 = time.perf_counter()
                cases = [
                    case_result(score_case(case, runs[case.eval_id], eval_set.criteria), runs[case.eval_id])
                    for case in eval_set.file.eval_set.eval_cases
                ]
                scoring += time.perf_counter() - t1
                inference += t1 - t0
                eval_set_results.append(
                    EvalSetResult(
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
                )
        finally:
            await target.aclose()
    return ResultsFile(
        tool=tool_info(),
        git=git_info(plan.workflow.base_dir),
        config_file=plan.workflow.path.name,
        timings=Timings(
            started_at=started_at,
            finished_at=_now(),
            duration_seconds=round(time.perf_counter() - start, 6),
            inference_seconds=round(inference, 6),
            scoring_seconds=round(scoring, 6),
        ),
        summary=count(c.status for s in eval_set_results for c in s.cases),
        eval_sets=eval_set_results,
    )


def run_plan(plan: Plan) -> ResultsFile:
    return asyncio.run(run_plan_async(plan))
