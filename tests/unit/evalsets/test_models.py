"""ADK's acceptance rules for eval data: camelCase or snake_case in, snake_case out, union and extra-key rules."""

from __future__ import annotations

import json

import pytest
from pydantic import ValidationError

from adk_eval_gate.evalsets.adk_eval_schema import (
    EvalSet,
    IntermediateData,
    Invocation,
    InvocationEvents,
    dump_invocation,
    tool_calls,
    tool_responses,
)
from tests.support.adk_required import adk

CAMEL = {
    "invocationId": "i1",
    "userContent": {"role": "user", "parts": [{"text": "hi"}]},
    "finalResponse": {"role": "model", "parts": [{"text": "yo"}]},
    "intermediateData": {
        "toolUses": [{"name": "t", "args": {"a": 1}}],
        "intermediateResponses": [["sub", [{"text": "x"}]]],
    },
}


def test_camel_case_in_snake_case_out():
    invocation = Invocation.model_validate(CAMEL)
    dumped = dump_invocation(invocation)
    assert dumped["invocation_id"] == "i1" and "user_content" in dumped and "final_response" in dumped
    assert dumped["intermediate_data"]["tool_uses"] == [{"name": "t", "args": {"a": 1}}]
    assert Invocation.model_validate(dumped) == invocation


def test_intermediate_data_union_resolves_like_adk():
    empty = Invocation.model_validate({"user_content": {"parts": [{"text": "q"}]}, "intermediate_data": {}})
    events = Invocation.model_validate(
        {
            "user_content": {"parts": [{"text": "q"}]},
            "intermediate_data": {
                "invocation_events": [
                    {
                        "author": "a",
                        "content": {
                            "parts": [
                                {"function_call": {"name": "t", "args": {}}},
                                {"function_response": {"name": "t", "response": {"result": 1}}},
                            ]
                        },
                        "invocationIndex": 3,
                    }
                ]
            },
        }
    )
    assert isinstance(empty.intermediate_data, IntermediateData)
    assert isinstance(events.intermediate_data, InvocationEvents)  # the web UI's extra keys are ignored, as in ADK
    assert [c.name for c in tool_calls(events.intermediate_data)] == ["t"]
    assert [r.name for r in tool_responses(events.intermediate_data)] == ["t"]
    assert tool_calls(None) == []


def test_eval_set_level_rules_match_adk():
    data = {
        "eval_set_id": "s",
        "unknown_top_level": 1,
        "eval_cases": [
            {"eval_id": "c", "extra_case_field": True, "conversation": [{"user_content": {"parts": [{"text": "q"}]}}]}
        ],
    }
    ours = EvalSet.model_validate(data)
    theirs = adk("evaluation.eval_set").EvalSet.model_validate_json(json.dumps(data))
    assert ours.eval_cases[0].eval_id == theirs.eval_cases[0].eval_id
    with pytest.raises(ValidationError):
        EvalSet.model_validate({"evalSetId": "s", "evalCases": []})
    with pytest.raises(ValidationError):  # unknown key inside an invocation is rejected, as ADK 2.13 does
        Invocation.model_validate({"user_content": {"parts": []}, "surprise": 1})
