"""The played model's script (targets/expected_model.py): turn by turn, each expected tool call the asking agent
has, in order, then the final response; and `init`'s next step without a key."""

from __future__ import annotations

from adk_eval_gate.commands.init import next_steps
from adk_eval_gate.evalsets.adk_eval_schema import Invocation
from adk_eval_gate.targets.expected_model import CasePlay


def _turn(answer: str, calls: list[tuple[str, dict]]) -> Invocation:
    return Invocation.model_validate(
        {
            "user_content": {"role": "user", "parts": [{"text": "q"}]},
            "final_response": {"role": "model", "parts": [{"text": answer}]},
            "intermediate_data": {"tool_uses": [{"name": n, "args": a} for n, a in calls]},
        }
    )


def _said(play: CasePlay, tools: set[str]) -> str:
    part = (play.next_content(tools).parts or [])[0]
    return f"{part.function_call.name}{part.function_call.args}" if part.function_call else f"text:{part.text}"


def test_each_turn_plays_its_calls_in_order_then_its_answer() -> None:
    play = CasePlay([_turn("first", [("a", {"x": 1}), ("b", {})]), _turn("second", [])])
    tools = {"a", "b"}
    assert _said(play, tools) == "text:"  # no turn started yet: nothing to play
    play.start_turn()
    assert [_said(play, tools) for _ in range(4)] == ["a{'x': 1}", "b{}", "text:first", "text:first"]
    play.start_turn()
    assert _said(play, tools) == "text:second"
    play.start_turn()
    assert _said(play, tools) == "text:"  # past the last expected turn


def test_a_call_the_agent_cannot_make_is_left_out() -> None:
    play = CasePlay([_turn("done", [("transfer_to_agent", {"agent_name": "cart"}), ("add", {}), ("total", {})])])
    play.start_turn()
    assert _said(play, {"transfer_to_agent"}) == "transfer_to_agent{'agent_name': 'cart'}"
    assert _said(play, {"total"}) == "total{}"  # the sub-agent has no `add`: skipped, never sent to ADK
    assert _said(play, {"total"}) == "text:done"


def test_init_suggests_the_offline_run_when_no_key_is_set() -> None:
    assert "adk-eval-gate validate && adk-eval-gate ci --offline" in next_steps("main", has_key=False)
    with_key = next_steps("main", has_key=True)
    assert "--offline" not in with_key and "adk-eval-gate validate && adk-eval-gate ci " in with_key
