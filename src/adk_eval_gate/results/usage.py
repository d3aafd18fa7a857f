"""Token and cost accounting of a run: the judges' (per criterion), and per agent the agent's own model calls
(from its events' usage metadata, counted as ADK's inference_call_count_v1 / token_usage_v1 count them) and the
user simulator's calls."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from adk_eval_gate.evalsets.adk_eval_schema import InvocationEvents, tool_calls
from adk_eval_gate.llm.client import UsageStats
from adk_eval_gate.llm.prices import PriceTable
from adk_eval_gate.results.results_format import AgentUsage, JudgeCounts, JudgeUsage, ModelTokens, RunUsage
from adk_eval_gate.targets.case_run import CaseRun


def counts(stats: UsageStats) -> JudgeCounts:
    return JudgeCounts(
        calls=stats.calls,
        cache_hits=stats.cache_hits,
        failures=stats.failures,
        input_tokens=stats.input_tokens,
        output_tokens=stats.output_tokens,
        cost_usd=None if stats.unpriced else round(stats.cost_usd, 6),
        unpriced_models=sorted(stats.unpriced),
    )


def judge_usage(stats: Mapping[str, UsageStats]) -> JudgeUsage:
    total = UsageStats.total(stats.values())
    return JudgeUsage(**counts(total).model_dump(), by_criterion={name: counts(s) for name, s in sorted(stats.items())})


def _simulator_stats(runs: Iterable[CaseRun]) -> UsageStats | None:
    used = [run.simulator_usage for run in runs if run.simulator_usage is not None]
    if not used:
        return None
    return UsageStats.total(used)


def agent_usage(runs: Iterable[CaseRun], prices: PriceTable) -> AgentUsage:
    runs = list(runs)
    by_model: dict[str, ModelTokens] = {}
    for run in runs:
        for invocation in run.invocations or ():
            if not isinstance(invocation.intermediate_data, InvocationEvents):
                continue
            for event in invocation.intermediate_data.invocation_events:
                if event.usage_metadata is None and not event.model_version:
                    continue
                tally = by_model.setdefault(event.model_version or "unknown", ModelTokens())
                tally.calls += 1
                usage = event.usage_metadata
                if usage is not None:
                    tally.input_tokens += usage.prompt_token_count or 0
                    tally.output_tokens += (usage.candidates_token_count or 0) + (usage.thoughts_token_count or 0)
    cost: float | None = 0.0
    unpriced = []
    for model, tally in by_model.items():
        price = prices.cost(model, tally.input_tokens, tally.output_tokens)
        if price is None:
            if tally.input_tokens or tally.output_tokens:
                unpriced.append(model)
        elif cost is not None:
            cost += price
    simulator = _simulator_stats(runs)
    return AgentUsage(
        model_calls=sum(t.calls for t in by_model.values()),
        input_tokens=sum(t.input_tokens for t in by_model.values()),
        output_tokens=sum(t.output_tokens for t in by_model.values()),
        cost_usd=None if unpriced else round(cost or 0.0, 6),
        unpriced_models=sorted(unpriced),
        by_model=dict(sorted(by_model.items())),
        user_simulator=counts(simulator) if simulator else None,
    )


# One run's usage, recorded in the results file (`RunRecord.usage`) so the baseline keeps every sample.
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
