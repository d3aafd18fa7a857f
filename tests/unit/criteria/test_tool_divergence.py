"""Where a turn's tool calls first departed from the expected ones: the words the report leads a trajectory
regression with (`first diverging call: expected roll_die(sides=6), got roll_dice(sides=6)`)."""

from __future__ import annotations

from google.genai import types as genai_types

from adk_eval_gate.core.redaction import MASK
from adk_eval_gate.criteria.engine.criterion import ScoringInput
from adk_eval_gate.criteria.engine.options import MatchType, ToolTrajectoryOptions
from adk_eval_gate.criteria.tool_divergence import (
    any_order_divergence,
    exact_divergence,
    in_order_divergence,
    show_call,
)
from adk_eval_gate.criteria.tool_trajectory import score_tool_trajectory
from adk_eval_gate.evalsets.adk_eval_schema import EvalCase, IntermediateData, Invocation


def call(name: str, **args: object) -> genai_types.FunctionCall:
    return genai_types.FunctionCall(name=name, args=args)


def turn(*calls: genai_types.FunctionCall) -> Invocation:
    return Invocation(
        user_content=genai_types.Content(role="user", parts=[genai_types.Part(text="q")]),
        intermediate_data=IntermediateData(tool_uses=list(calls)),
    )


def test_the_same_calls_do_not_diverge():
    calls = [call("roll_die", sides=6), call("check_prime", nums=[3])]
    assert exact_divergence(calls, calls) is None
    assert in_order_divergence(calls, calls) is None and any_order_divergence(calls, calls) is None
    assert exact_divergence([], []) is None


def test_a_different_name_is_named_beside_the_expected_one():
    got = exact_divergence([call("roll_dice", sides=6)], [call("roll_die", sides=6)])
    assert got == "expected roll_die(sides=6), got roll_dice(sides=6)"


def test_different_args_show_both_values_a_string_quoted():
    got = exact_divergence([call("roll_die", sides="6")], [call("roll_die", sides=6)])
    assert got == 'expected roll_die(sides=6), got roll_die(sides="6")'
    assert exact_divergence([call("roll_die", sides=8)], [call("roll_die", sides=6)], ignore_args=True) is None


def test_a_missing_call_and_an_extra_call():
    first = call("roll_die", sides=6)
    assert exact_divergence([], [first]) == "expected roll_die(sides=6), got no call"
    assert exact_divergence([first], [first, call("check_prime", nums=[6])]) == (
        "expected check_prime(nums=[6]), got no call"
    )
    assert exact_divergence([first, call("check_prime", n=7)], [first]) == "an extra call check_prime(n=7)"


def test_in_order_and_any_order_name_the_expected_call_not_found():
    expected = [call("roll_die", sides=6), call("check_prime", nums=[6])]
    # in order: roll_die matched; check_prime never came, the agent called something else after it
    got = in_order_divergence([call("roll_die", sides=6), call("roll_die", sides=8)], expected)
    assert got == "expected check_prime(nums=[6]), got roll_die(sides=8)"
    assert in_order_divergence([call("roll_die", sides=6)], expected) == "expected check_prime(nums=[6]), got no call"
    assert in_order_divergence([call("x"), *expected], expected) is None  # extra calls are allowed in order
    assert any_order_divergence([call("check_prime", nums=[6])], expected) == (
        "expected roll_die(sides=6), got no such call"
    )


def test_a_long_or_secret_value_is_clipped_and_masked(monkeypatch):
    secret = "sk-live-1234567890abcdefghij"
    monkeypatch.setenv("SERVICE_API_KEY", secret)
    shown = show_call(call("search", query=f"token {secret}", text="x" * 500))
    assert secret not in shown and MASK in shown and len(shown) <= 56 and "x…)" in shown
    got = exact_divergence([call("search", query=secret)], [call("search", query="dice")])
    assert got is not None and secret not in got and MASK in got
    assert "\x1b" not in show_call(call("ping", note="a\x1b[31mred")) == 'ping(note="a\\u001b[31mred")'


def test_a_multi_turn_case_keeps_each_failing_turn_s_departure():
    case = EvalCase(eval_id="c", conversation=[turn(call("roll_die", sides=6)), turn(call("check_prime", nums=[6]))])
    actual = [turn(call("roll_die", sides=6)), turn(call("check_prime", nums=[5]))]
    outcome = score_tool_trajectory(
        ScoringInput(case, actual, case.conversation), ToolTrajectoryOptions(threshold=1.0, match_type=MatchType.EXACT)
    )
    first, second = outcome.per_invocation
    assert first.score == 1.0 and first.detail is None
    assert second.score == 0.0 and second.detail == "expected check_prime(nums=[6]), got check_prime(nums=[5])"
