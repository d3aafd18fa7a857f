"""ADK 2.13's informational efficiency metrics (`evaluation/_efficiency_evaluators.py`), computed per invocation
on the actual invocations and never passing or failing a case.

* `tool_call_count_v1`: tool calls of the turn;
* `inference_call_count_v1`: events with usage metadata or a model version (None for hand-written
  IntermediateData);
* `token_usage_v1`: input plus output tokens over the turn's model calls (None when no call reported either);
* `invocation_duration_v1`: the turn's measured seconds (None when it was not timed).

One run's value is the mean of its non-None per-invocation values, except tokens, which divide by every
invocation (ADK's `_average`: an unreported count means zero for that turn). Over several runs, every run's
non-None per-invocation values are pooled into one mean, as AgentEvaluator reports them.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from adk_eval_gate.core.numbers import in_range
from adk_eval_gate.evalsets.adk_eval_schema import Invocation, InvocationEvents, tool_calls
from adk_eval_gate.evalsets.criterion_names import INFORMATIONAL_METRICS

NAMES = INFORMATIONAL_METRICS


def tool_call_count(invocation: Invocation) -> float | None:
    return float(len(tool_calls(invocation.intermediate_data)))


def inference_call_count(invocation: Invocation) -> float | None:
    data = invocation.intermediate_data
    if not isinstance(data, InvocationEvents):
        return None
    return float(sum(1 for e in data.invocation_events if e.usage_metadata is not None or e.model_version is not None))


def token_usage(invocation: Invocation) -> float | None:
    """ADK's TokenUsage: input = prompt + tool-use prompt, output = candidates + thoughts, each None until some
    call reports a part of it; the total is derived from the two."""
    data = invocation.intermediate_data
    if not isinstance(data, InvocationEvents):
        return None
    total_in: int | None = None
    total_out: int | None = None
    for event in data.invocation_events:
        usage = event.usage_metadata
        if usage is None:
            continue
        if usage.prompt_token_count is not None or usage.tool_use_prompt_token_count is not None:
            total_in = (total_in or 0) + (usage.prompt_token_count or 0) + (usage.tool_use_prompt_token_count or 0)
        if usage.candidates_token_count is not None or usage.thoughts_token_count is not None:
            total_out = (total_out or 0) + (usage.candidates_token_count or 0) + (usage.thoughts_token_count or 0)
    if total_in is None and total_out is None:
        return None
    return float((total_in or 0) + (total_out or 0))


def invocation_duration(invocation: Invocation) -> float | None:
    return invocation.duration


_COMPUTE: dict[str, Callable[[Invocation], float | None]] = {
    "tool_call_count_v1": tool_call_count,
    "inference_call_count_v1": inference_call_count,
    "token_usage_v1": token_usage,
    "invocation_duration_v1": invocation_duration,
}


@dataclass(frozen=True)
class EfficiencyValue:
    score: float | None
    per_invocation: list[float | None]


def run_value(name: str, invocations: Sequence[Invocation]) -> EfficiencyValue:
    """One run's value, as the ADK evaluator's overall score."""
    # the agent reports its own token counts (and replayed actuals their durations): one past ±MAX_MAGNITUDE
    # (2**62 tokens) is read as unreported, so the means taken over runs and cases cannot overflow
    values = [v if v is None or in_range(v) else None for v in (_COMPUTE[name](i) for i in invocations)]
    present = [v for v in values if v is not None]
    if not present:
        return EfficiencyValue(None, values)
    if name == "token_usage_v1":
        return EfficiencyValue(sum(present) / len(values), values)
    if name == "invocation_duration_v1":
        return EfficiencyValue(round(sum(present) / len(present), 3), values)
    return EfficiencyValue(sum(present) / len(present), values)


def case_value(name: str, runs: Sequence[Sequence[Invocation]]) -> EfficiencyValue:
    """One run: its own value. Several: the mean of every run's non-None per-invocation values (AgentEvaluator)."""
    per_run = [run_value(name, invocations) for invocations in runs]
    if len(per_run) == 1:
        return per_run[0]
    pooled = [v for r in per_run for v in r.per_invocation if v is not None]
    width = max((len(r.per_invocation) for r in per_run), default=0)
    per_turn = []
    for i in range(width):
        cells = [r.per_invocation[i] for r in per_run if i < len(r.per_invocation)]
        turn = [v for v in cells if v is not None]
        per_turn.append(statistics.mean(turn) if turn else None)
    return EfficiencyValue(statistics.mean(pooled) if pooled else None, per_turn)
