"""What `validate` says before anything runs: each target starts (actuals parse, the agent imports) and each
criterion that will not be scored says why (no judge credentials, no Google Cloud project, no code)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

from adk_eval_gate.criteria.engine.vertex_service import missing_project
from adk_eval_gate.criteria.vertex_metrics import VERTEX_METRICS
from adk_eval_gate.llm.client import has_credentials
from adk_eval_gate.run.plan import EvalSetPlan, Plan
from adk_eval_gate.targets import build_target


def check_targets(plan: Plan) -> None:
    async def start_each() -> None:
        for agent in plan.agents:
            target = build_target(agent.agent, plan.workflow.base_dir)
            try:
                await target.start()
            finally:
                await target.aclose()

    asyncio.run(start_each())


def plan_lines(plan: Plan) -> Iterator[str]:
    for agent in plan.agents:
        cases = sum(len(s.file.eval_set.eval_cases) for s in agent.eval_sets)
        kind = agent.agent.settings.target.kind
        yield f"{agent.name}: {len(agent.eval_sets)} eval set(s), {cases} case(s), target {kind}"
        for eval_set in agent.eval_sets:
            names = ", ".join(c.name for c in eval_set.criteria)
            yield (
                f"  {plan.relative(eval_set.file.path)} [{eval_set.eval_set_id}]: "
                f"{len(eval_set.file.eval_set.eval_cases)} case(s); criteria ({eval_set.criteria_source}): {names}"
            )
            yield from _criteria_notes(eval_set)


def _criteria_notes(eval_set: EvalSetPlan) -> Iterator[str]:
    for criterion in eval_set.criteria:
        if criterion.spec.unavailable_reason:
            yield f"    note: {criterion.name} will be reported as not evaluated: {criterion.spec.unavailable_reason}"
        elif criterion.name in VERTEX_METRICS:
            if missing := missing_project(criterion.name):
                yield f"    note: {missing}; until then it will be reported as not evaluated"
        elif criterion.spec.judged and not has_credentials():
            yield (
                f"    note: {criterion.name} needs a judge: without GOOGLE_API_KEY (or Vertex AI settings) "
                "it will be reported as not evaluated"
            )
