"""adk-eval-gate's own trajectory criteria: precision, recall and single-tool use (properties, edges, end to end)."""

from __future__ import annotations

import pytest
from google.genai import types as genai_types
from hypothesis import given, settings
from hypothesis import strategies as st

from adk_eval_gate.core.errors import InputError
from adk_eval_gate.criteria.engine.criterion import ScoringInput, Status
from adk_eval_gate.criteria.registry import REGISTRY, resolve_criteria
from adk_eval_gate.criteria.tool_trajectory import any_order_match, exact_match
from adk_eval_gate.criteria.trajectory_overlap import matched_calls, precision, recall
from adk_eval_gate.evalsets.adk_eval_schema import EvalCase, IntermediateData, Invocation

ADK_NAMES = {"tool_trajectory_avg_score", "response_match_score"}


def call(name: str, **args) -> genai_types.FunctionCall:
    return genai_types.FunctionCall(name=name, args=args)


def turn(*calls: genai_types.FunctionCall) -> Invocation:
    return Invocation(
        user_content=genai_types.Content(role="user", parts=[genai_types.Part(text="q")]),
        intermediate_data=IntermediateData(tool_uses=list(calls)),
    )


calls = st.lists(
    st.builds(call, st.sampled_from(["roll", "check", "fetch"]), n=st.integers(min_value=0, max_value=2)), max_size=6
)


@settings(max_examples=300, deadline=None)
@given(actual=calls, expected=calls)
def test_scores_are_fractions_and_recall_mirrors_precision(actual, expected):
    p, r = precision(actual, expected), recall(actual, expected)
    assert 0.0 <= p <= 1.0 and 0.0 <= r <= 1.0
    if actual and expected:
        assert recall(actual, expected) == precision(expected, actual)  # the same pairs, the other denominator
    assert matched_calls(actual, expected) == matched_calls(expected, actual)
    assert precision(list(reversed(actual)), expected) == p  # order never matters to either
    if exact_match(actual, expected):
        assert p == r == 1.0
    if any_order_match(actual, expected):
        assert r == 1.0  # every expected call was made: nothing missing


@settings(max_examples=200, deadline=None)
@given(expected=calls.filter(bool), extra=calls)
def test_extra_calls_lower_precision_only(expected, extra):
    actual = expected + extra
    assert recall(actual, expected) == 1.0
    assert precision(actual, expected) == pytest.approx(matched_calls(actual, expected) / len(actual))
    assert precision(actual, expected) >= len(expected) / len(actual)


def test_edges_and_repeated_calls():
    roll = call("roll", n=6)
    assert precision([], []) == 1.0 and recall([], []) == 1.0
    assert precision([], [roll]) == 0.0 and recall([], [roll]) == 0.0  # silence where a call was due
    assert precision([roll], []) == 0.0 and recall([roll], []) == 1.0
    # one expected call cannot excuse the same call made twice
    assert precision([roll, roll], [roll]) == 0.5 and recall([roll, roll], [roll]) == 1.0
    assert precision([call("roll", n=4)], [roll]) == 0.0
    assert precision([call("roll", n=4)], [roll], ignore_args=True) == 1.0


def test_case_scores_are_the_mean_over_turns_with_per_turn_scores():
    criteria = resolve_criteria(
        {
            "gate_trajectory_precision": 0.75,
            "gate_trajectory_recall": {"threshold": 0.5},
            "gate_trajectory_single_tool_use": {"threshold": 1.0, "toolName": "roll"},
        },
        None,
    )
    expected = [turn(call("roll", n=6)), turn(call("roll", n=6), call("check", nums=[1]))]
    actual = [turn(call("roll", n=6), call("fetch")), turn(call("check", nums=[1]))]
    data = ScoringInput(EvalCase(eval_id="c", conversation=expected), actual, expected)
    by_name = {c.name: c.spec.scorer(data, c.options) for c in criteria}
    p, r, single = (
        by_name["gate_trajectory_precision"],
        by_name["gate_trajectory_recall"],
        by_name["gate_trajectory_single_tool_use"],
    )
    assert [i.score for i in p.per_invocation] == [0.5, 1.0] and p.score == 0.75 and p.status is Status.PASSED
    assert [i.score for i in r.per_invocation] == [1.0, 0.5] and r.score == 0.75
    assert [i.score for i in single.per_invocation] == [1.0, 0.0] and single.status is Status.FAILED


def test_names_cannot_be_mistaken_for_adks_and_options_are_checked():
    ours = [name for name in REGISTRY if name.startswith("gate_")]
    assert sorted(ours) == ["gate_trajectory_precision", "gate_trajectory_recall", "gate_trajectory_single_tool_use"]
    with pytest.raises(InputError, match="tool_name"):
        resolve_criteria({"gate_trajectory_single_tool_use": {"threshold": 1.0}}, "c.yml")
    with pytest.raises(InputError, match="did you mean"):
        resolve_criteria({"gate_trajectory_precison": 0.5}, "c.yml")
