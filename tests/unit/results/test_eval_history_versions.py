"""The eval history is written in the schema of the installed google-adk, whichever release the agent pins: an older
release's models (no `duration`, no event `usage_metadata`, an event `content` that is required but nullable)
get our invocations without the fields they lack, and the pinned release gets them whole."""

from __future__ import annotations

from typing import Optional, Union

from pydantic import BaseModel, ConfigDict
from pydantic.alias_generators import to_camel

from adk_eval_gate.evalsets.adk_eval_schema import Invocation
from adk_eval_gate.targets.adk_history import fit as _fit
from tests.support.adk_required import adk


class _Old(BaseModel):  # google-adk 2.2 / 1.39's EvalBaseModel
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="forbid")


class OldEvent(_Old):
    author: str
    content: Optional[dict]  # noqa: UP045 - spelled as the old release spells it: required, may be null


class OldEvents(_Old):
    invocation_events: list[OldEvent] = []


class OldData(_Old):
    tool_uses: list = []
    tool_responses: list = []
    intermediate_responses: list = []


class OldInvocation(_Old):
    invocation_id: str = ""
    user_content: dict
    final_response: Optional[dict] = None  # noqa: UP045
    intermediate_data: Optional[Union[OldData, OldEvents]] = None  # noqa: UP007, UP045
    creation_timestamp: float = 0.0


def ours(events: bool) -> dict:
    data = (
        {
            "invocation_events": [
                {"author": "a", "content": {"role": "model", "parts": [{"text": "hi"}]}},
                {"author": "a", "usage_metadata": {"total_token_count": 15}},
            ]
        }
        if events
        else {"tool_uses": [{"name": "roll", "args": {"sides": 6}}], "intermediate_responses": []}
    )
    invocation = Invocation.model_validate(
        {
            "invocation_id": "i-1",
            "user_content": {"role": "user", "parts": [{"text": "roll"}]},
            "intermediate_data": data,
            "duration": 0.2,
            "model_duration": 0.1,
        }
    )
    return invocation.model_dump(mode="json", exclude_none=True)


def test_an_older_release_gets_the_fields_it_knows_and_null_for_a_nullable_required_one():
    fitted = OldInvocation.model_validate(_fit(OldInvocation, ours(events=True)))
    assert fitted.invocation_id == "i-1" and fitted.user_content["parts"] == [{"text": "roll"}]
    first, second = fitted.intermediate_data.invocation_events
    assert first.content["parts"] == [{"text": "hi"}] and second.content is None


def test_the_union_branch_is_the_one_the_data_uses():
    fitted = OldInvocation.model_validate(_fit(OldInvocation, ours(events=False)))
    assert isinstance(fitted.intermediate_data, OldData)
    assert fitted.intermediate_data.tool_uses[0]["args"] == {"sides": 6}


def test_the_pinned_release_gets_every_field():
    eval_case = adk("evaluation.eval_case")
    for events in (True, False):
        data = ours(events)
        assert _fit(eval_case.Invocation, data) == data
        assert eval_case.Invocation.model_validate(_fit(eval_case.Invocation, data)).duration == 0.2
