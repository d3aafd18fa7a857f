"""Our agents-cli dataset models accept and refuse exactly what the Agent Platform SDK's EvalCase does: the same
documents are validated with both (google-cloud-aiplatform is in the dev extra for this)."""

from __future__ import annotations

import copy

import pytest
from pydantic import ValidationError
from vertexai._genai import types as sdk

from adk_eval_gate.evalsets.agents_cli_models import AgentsCliCase, dump_case

PROMPT = {"role": "user", "parts": [{"text": "What is the capital of France?"}]}
ANSWER = {"role": "model", "parts": [{"text": "Paris."}]}
EVERY_FIELD = {
    "eval_case_id": "full",
    "prompt": PROMPT,
    "responses": [{"response": ANSWER}],
    "reference": {"response": ANSWER},
    "system_instruction": {"parts": [{"text": "be brief"}]},
    "conversation_history": [
        {"turn_id": "t0", "author": "user", "content": PROMPT, "creation_timestamp": "2026-01-02T03:04:05Z"}
    ],
    "rubric_groups": {
        "quality": {
            "group_id": "g",
            "display_name": "Quality",
            "rubrics": [
                {
                    "rubric_id": "r1",
                    "content": {"property": {"description": "names Paris"}},
                    "type": "T",
                    "importance": "HIGH",
                }
            ],
        }
    },
    "intermediate_events": [{"event_id": "e", "author": "root_agent", "content": ANSWER}],
    "agent_info": {
        "name": "app",
        "root_agent_id": "root_agent",
        "agents": {"root_agent": {"agent_id": "root_agent", "agent_type": "LlmAgent", "sub_agents": []}},
    },
    "agent_data": {
        "agents": {
            "root_agent": {
                "agent_id": "root_agent",
                "instruction": "answer",
                "description": "d",
                "tools": [{"function_declarations": [{"name": "get_capital", "description": "capital"}]}],
            }
        },
        "turns": [
            {
                "turn_index": 0,
                "turn_id": "turn_0",
                "events": [
                    {
                        "author": "user",
                        "content": PROMPT,
                        "event_time": "2026-01-02T03:04:05Z",
                        "state_delta": {"k": 1},
                    },
                    {"author": "root_agent", "content": ANSWER, "active_tools": [{"function_declarations": []}]},
                ],
            }
        ],
    },
    "user_scenario": {"starting_prompt": "hi", "conversation_plan": "ask", "test_case_title": "t"},
    "context": "France's capital is Paris.",
    "expected_tool": "get_capital",
}


def _with(path: list, value) -> dict:
    document = copy.deepcopy(EVERY_FIELD)
    holder = document
    for key in path[:-1]:
        holder = holder[key]
    holder[path[-1]] = value
    return document


def _both(document: dict) -> tuple[bool, bool]:
    def accepts(model) -> bool:
        try:
            model.model_validate(document)
        except ValidationError:
            return False
        return True

    return accepts(AgentsCliCase), accepts(sdk.EvalCase)


def test_every_field_the_sdk_allows_is_read_and_dumped_as_the_sdk_dumps_it():
    ours, theirs = AgentsCliCase.model_validate(EVERY_FIELD), sdk.EvalCase.model_validate(EVERY_FIELD)
    assert dump_case(ours) == theirs.model_dump(mode="json", exclude_none=True)
    assert dump_case(ours)["expected_tool"] == "get_capital"  # extra fields kept for custom metrics


def test_camel_case_keys_are_read_like_the_sdk():
    camel = {
        "evalCaseId": "c",
        "agentData": {"turns": [{"turnIndex": 0, "events": [{"author": "user", "content": PROMPT}]}]},
    }
    ours, theirs = AgentsCliCase.model_validate(camel), sdk.EvalCase.model_validate(camel)
    assert dump_case(ours) == theirs.model_dump(mode="json", exclude_none=True)
    assert ours.eval_case_id == "c" and ours.agent_data.turns[0].turn_index == 0


@pytest.mark.parametrize(
    ("path", "value"),
    [
        (["reference"], ANSWER),  # a bare Content where the SDK wants {"response": Content}
        (["reference", "text"], "Paris"),
        (["responses", 0, "text"], "Paris"),
        (["agent_data", "turns", 0, "events", 0, "speaker"], "user"),
        (["agent_data", "turns", 0, "turn_index"], "first"),
        (["agent_data", "unknown"], 1),
        (["agent_data", "agents", "root_agent", "tools"], [{"bogus": 1}]),
        (["rubric_groups", "quality", "rubrics", 0, "content", "text"], "x"),
        (["conversation_history", 0, "creation_timestamp"], "yesterday"),
        (["user_scenario", "persona"], "x"),
        (["prompt", "parts"], "not a list"),
        (["agent_info", "agents", "root_agent", "sub_agents"], "one"),
        (["eval_case_id"], 7),
        (["intermediate_events", 0, "event_time"], "now"),
    ],
)
def test_refused_exactly_where_the_sdk_refuses(path, value):
    assert _both(_with(path, value)) == (False, False)


@pytest.mark.parametrize(
    ("path", "value"),
    [
        (["my_custom_field"], {"nested": [1, 2]}),
        (["context"], PROMPT),  # str or Content: `context` is an extra field to the SDK
        (["agent_data", "turns", 0, "turn_id"], None),
        (["eval_case_id"], None),
        (["rubric_groups", "quality", "rubrics", 0, "importance"], "MEDIUM"),
    ],
)
def test_accepted_exactly_where_the_sdk_accepts(path, value):
    assert _both(_with(path, value)) == (True, True)
