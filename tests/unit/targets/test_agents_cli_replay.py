"""The replay target on traces `agents-cli eval generate` 1.11 wrote (tests/support/agents_cli/generated-traces.json,
the bundled example agent behind `adk api_server`): the agent's events after the last user message are the turn."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from adk_eval_gate.core.errors import InputError
from adk_eval_gate.evalsets.adk_eval_schema import content_text, tool_calls
from adk_eval_gate.targets.replay import ReplayTarget
from tests.support.paths import ROOT

TRACES = ROOT / "tests" / "support" / "agents_cli" / "generated-traces.json"
EXAMPLE = ROOT / "examples" / "agents_cli"


def test_generated_traces_become_the_turns_invocations():
    target = ReplayTarget.from_paths((TRACES,))
    (follow_up,) = target.recordings("any", "weather_follow_up")
    (invocation,) = follow_up.invocations
    assert content_text(invocation.user_content) == "And in Paris?"  # Shape B: the last user message
    assert [c.name for c in tool_calls(invocation.intermediate_data)] == ["get_weather"]
    assert content_text(invocation.final_response) == "The weather in Paris is sunny, 22 C."
    (greeting,) = target.recordings("any", "greeting")[0].invocations
    assert content_text(greeting.user_content) == "Hello, what can you help me with?"  # Shape A: the prompt
    assert tool_calls(greeting.intermediate_data) == []


def test_traces_without_a_user_message_are_one_line(tmp_path):
    broken = json.loads(TRACES.read_text())
    case = broken["eval_cases"][3]
    case["agent_data"]["turns"] = [t for t in case["agent_data"]["turns"] if t["turn_index"] == 1]
    case["agent_data"]["turns"][0]["events"] = case["agent_data"]["turns"][0]["events"][1:]
    path = tmp_path / "traces.json"
    path.write_text(json.dumps(broken))
    with pytest.raises(InputError) as caught:
        ReplayTarget.from_paths((path,))
    assert "eval_cases[3].agent_data.turns: hold no user message" in caught.value.render()


def test_cases_not_run_record_nothing(tmp_path):
    dataset = EXAMPLE / "tests" / "eval" / "datasets" / "basic-dataset.json"  # no responses: nothing was run
    target = ReplayTarget.from_paths((Path(dataset),))
    assert target.recordings("basic-dataset", "greeting") == []
