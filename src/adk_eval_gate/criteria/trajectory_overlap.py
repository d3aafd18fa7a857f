"""adk-eval-gate's own trajectory criteria, beyond ADK's: precision, recall and single-tool use.

These are the ground-truth trajectory measures taught beside ADK's EXACT / IN_ORDER / ANY_ORDER matches. ADK does
not score them, so their names carry a `gate_` prefix: a config that uses them can never be mistaken for one
whose scores `adk eval` would reproduce.

* precision = actual calls that match an expected call ÷ actual calls (extra or wrong calls lower it);
* recall = expected calls matched by an actual call ÷ expected calls (missing calls lower it);
* single-tool use = 1 when the named tool was called in the turn, else 0.

Matching pairs calls one to one (a multiset intersection): an expected call matched once cannot excuse a second,
repeated actual call. Calls are equal by ADK's rule (name, and args unless `ignore_args`). Each turn gets a score;
the case score is their mean, like `tool_trajectory_avg_score`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from adk_eval_gate.criteria.engine.criterion import (
    InvocationScore,
    MetricOutcome,
    NotEvaluable,
    Scorer,
    ScoringInput,
    running_mean,
    status_for,
)
from adk_eval_gate.criteria.engine.options import SingleToolUseOptions, TrajectoryOverlapOptions
from adk_eval_gate.criteria.tool_trajectory import Call, same_call
from adk_eval_gate.evalsets.adk_eval_schema import Invocation, tool_calls


def matched_calls(actual: Sequence[Call], expected: Sequence[Call], ignore_args: bool = False) -> int:
    """How many actual calls pair off with a distinct expected call."""
    pool = list(expected)
    matched = 0
    for call in actual:
        for index, wanted in enumerate(pool):
            if same_call(call, wanted, ignore_args):
                del pool[index]
                matched += 1
                break
    return matched


def precision(actual: Sequence[Call], expected: Sequence[Call], ignore_args: bool = False) -> float:
    # No call made: nothing irrelevant was predicted, but silence where calls were due is not precise either.
    if not actual:
        return 1.0 if not expected else 0.0
    return matched_calls(actual, expected, ignore_args) / len(actual)


def recall(actual: Sequence[Call], expected: Sequence[Call], ignore_args: bool = False) -> float:
    if not expected:
        return 1.0
    return matched_calls(actual, expected, ignore_args) / len(expected)


def _per_turn(
    data: ScoringInput, threshold: float, score_turn: Callable[[Invocation, Invocation | None], float]
) -> MetricOutcome:
    if not data.actual:
        return MetricOutcome.not_evaluated("no actual invocations")
    expected: Sequence[Invocation | None] = data.expected if data.expected is not None else [None] * len(data.actual)
    per_invocation, scores = [], []
    for actual, reference in zip(data.actual, expected, strict=True):
        score = score_turn(actual, reference)
        scores.append(score)
        per_invocation.append(InvocationScore(score, status_for(score, threshold)))
    overall = running_mean(scores)
    return MetricOutcome(overall, status_for(overall, threshold), per_invocation)


def _overlap_scorer(
    measure: Callable[[Sequence[Call], Sequence[Call], bool], float],
) -> Scorer[TrajectoryOverlapOptions]:
    def score(data: ScoringInput, options: TrajectoryOverlapOptions) -> MetricOutcome:
        if data.expected is None:
            raise NotEvaluable("needs expected invocations (a reference conversation)")
        return _per_turn(
            data,
            options.threshold,
            lambda actual, reference: measure(
                tool_calls(actual.intermediate_data),
                # never None here: this scorer needs expected invocations (checked above)
                tool_calls(reference.intermediate_data if reference is not None else None),
                options.ignore_args,
            ),
        )

    return score


score_trajectory_precision = _overlap_scorer(precision)
score_trajectory_recall = _overlap_scorer(recall)


def score_single_tool_use(data: ScoringInput, options: SingleToolUseOptions) -> MetricOutcome:
    return _per_turn(
        data,
        options.threshold,
        lambda actual, _reference: float(
            any(call.name == options.tool_name for call in tool_calls(actual.intermediate_data))
        ),
    )
