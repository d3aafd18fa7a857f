"""`tool_trajectory_avg_score`: 1/0 per invocation by EXACT, IN_ORDER or ANY_ORDER match, averaged.

Calls are equal when names are equal and (unless `ignore_args`) args compare equal as Python dicts, which
is ADK's rule: ids are ignored, 1 == 1.0, "1" != 1, list order matters, and None args differ from {}.
"""

from __future__ import annotations

from collections.abc import Sequence

from google.genai import types as genai_types

from adk_eval_gate.criteria.engine.criterion import (
    InvocationScore,
    MetricOutcome,
    NotEvaluable,
    ScoringInput,
    running_mean,
    status_for,
)
from adk_eval_gate.criteria.engine.options import MatchType, ToolTrajectoryOptions
from adk_eval_gate.criteria.tool_divergence import any_order_divergence, exact_divergence, in_order_divergence
from adk_eval_gate.evalsets.adk_eval_schema import tool_calls

Call = genai_types.FunctionCall


def same_call(actual: Call, expected: Call, ignore_args: bool) -> bool:
    return actual.name == expected.name and (ignore_args or actual.args == expected.args)


def exact_match(actual: Sequence[Call], expected: Sequence[Call], ignore_args: bool = False) -> bool:
    return len(actual) == len(expected) and all(
        same_call(a, e, ignore_args) for a, e in zip(actual, expected, strict=True)
    )


def in_order_match(actual: Sequence[Call], expected: Sequence[Call], ignore_args: bool = False) -> bool:
    """Expected calls form a subsequence of the actual calls (greedy, as ADK)."""
    if not expected:
        return True
    position = 0
    for call in actual:
        if same_call(call, expected[position], ignore_args):
            position += 1
            if position == len(expected):
                return True
    return False


def any_order_match(actual: Sequence[Call], expected: Sequence[Call], ignore_args: bool = False) -> bool:
    """Every expected call is matched by a distinct actual call, first match wins (as ADK)."""
    if not expected:
        return True
    pool = list(actual)
    for wanted in expected:
        for index, call in enumerate(pool):
            if same_call(call, wanted, ignore_args):
                del pool[index]
                break
        else:
            return False
    return True


MATCHERS = {MatchType.EXACT: exact_match, MatchType.IN_ORDER: in_order_match, MatchType.ANY_ORDER: any_order_match}
# Where a turn that did not match first departed, kept as its detail: the report names it (gate/plain.py).
DIVERGENCES = {
    MatchType.EXACT: exact_divergence,
    MatchType.IN_ORDER: in_order_divergence,
    MatchType.ANY_ORDER: any_order_divergence,
}


def score_tool_trajectory(data: ScoringInput, options: ToolTrajectoryOptions) -> MetricOutcome:
    if data.expected is None:
        raise NotEvaluable("needs expected invocations (a reference conversation)")
    if not data.actual:
        return MetricOutcome.not_evaluated("no actual invocations")
    match, divergence = MATCHERS[options.match_type], DIVERGENCES[options.match_type]
    per_invocation, scores = [], []
    for actual, expected in zip(data.actual, data.expected, strict=True):
        got, wanted = tool_calls(actual.intermediate_data), tool_calls(expected.intermediate_data)
        matched = match(got, wanted, options.ignore_args)
        score = 1.0 if matched else 0.0
        scores.append(score)
        detail = None if matched else divergence(got, wanted, options.ignore_args)
        per_invocation.append(InvocationScore(score, status_for(score, options.threshold), detail))
    overall = running_mean(scores)
    return MetricOutcome(overall, status_for(overall, options.threshold), per_invocation)
