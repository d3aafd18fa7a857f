"""One run's usage, recorded in the results file (`RunRecord.usage`) so the baseline keeps every sample."""

from __future__ import annotations

from adk_eval_gate.evalsets.models import tool_calls
from adk_eval_gate.llm.prices import PriceTable
from adk_eval_gate.results.models import RunUsage
from adk_eval_gate.results.usage import agent_usage
from adk_eval_gate.targets.base import CaseRun


def run_cost(run: CaseRun, prices: PriceTable) -> tuple[float, list[str]]:
    """Agent and user-simulator spend of one run, and the models it used that have no price."""
    usage = agent_usage([run], prices)
    unpriced = list(usage.unpriced_models)
    cost = usage.cost_usd or 0.0
    if run.simulator_usage is not None:
        cost += run.simulator_usage.cost_usd
        unpriced += sorted(run.simulator_usage.unpriced)
    return cost, unpriced


def run_usage(run: CaseRun, prices: PriceTable) -> RunUsage | None:
    if not run.ok:
        return None
    usage = agent_usage([run], prices)
    cost, unpriced = run_cost(run, prices)
    return RunUsage(
        input_tokens=usage.input_tokens,
        output_tokens=usage.output_tokens,
        model_calls=usage.model_calls,
        tool_calls=sum(len(tool_calls(i.intermediate_data)) for i in run.invocations or ()),
        latency_seconds=round(run.duration_seconds, 6),
        cost_usd=None if unpriced else round(cost, 8),
    )
