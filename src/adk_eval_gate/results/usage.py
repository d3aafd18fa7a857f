"""Token and cost accounting of a run: the judges' (per criterion), and per agent the agent's own model calls
(from its events' usage metadata, counted as ADK's inference_call_count_v1 / token_usage_v1 count them) and the
user simulator's calls."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from adk_eval_gate.evalsets.models import InvocationEvents
from adk_eval_gate.llm.client import UsageStats
from adk_eval_gate.llm.prices import PriceTable
from adk_eval_gate.results.models import AgentUsage, JudgeCounts, JudgeUsage, ModelTokens
from adk_eval_gate.targets.base import CaseRun


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
    total = UsageStats()
    for item in stats.values():
        total.add(item)
    return JudgeUsage(**counts(total).model_dump(), by_criterion={name: counts(s) for name, s in sorted(stats.items())})


def _simulator_stats(runs: Iterable[CaseRun]) -> UsageStats | None:
    used = [run.simulator_usage for run in runs if run.simulator_usage is not None]
    if not used:
        return None
    total = UsageStats()
    for usage in used:
        total.add(usage)
    return total


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
