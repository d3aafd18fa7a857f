"""ADK's eval data schema (google-adk 2.13 `evaluation/eval_case.py`, `eval_set.py`, `eval_rubrics.py`).

Same acceptance rules as ADK so users' files load unchanged: nested objects take camelCase or snake_case,
unknown keys are rejected where ADK rejects them, and `EvalSet`'s own keys are snake_case only. Content,
Part and FunctionCall are google-genai's own types, so parts parse exactly as ADK parses them.
Dumps are snake_case (`model_dump(mode="json", exclude_none=True)`).
"""

from __future__ import annotations

from typing import Any

from google.genai import types as genai_types
from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator
from pydantic.alias_generators import to_camel

from adk_eval_gate.core.json_types import JsonObject

PREBUILT_PERSONAS = ("EXPERT", "NOVICE", "EVALUATOR")


class EvalModel(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="forbid")


class RubricContent(EvalModel):
    text_property: str | None = None


class Rubric(EvalModel):
    rubric_id: str
    rubric_content: RubricContent
    description: str | None = None
    type: str | None = None


class IntermediateData(EvalModel):
    """Hand-authored trajectory: tool calls, tool responses and sub-agent messages."""

    tool_uses: list[genai_types.FunctionCall] = []
    tool_responses: list[genai_types.FunctionResponse] = []
    intermediate_responses: list[tuple[str, list[genai_types.Part]]] = []


class InvocationEvent(EvalModel):
    # ADK's web UI adds transcript indices to events; ADK ignores unknown keys here.
    model_config = ConfigDict(extra="ignore")

    author: str
    content: genai_types.Content | None = None
    grounding_metadata: genai_types.GroundingMetadata | None = None
    usage_metadata: genai_types.GenerateContentResponseUsageMetadata | None = None
    model_version: str | None = None


class InvocationEvents(EvalModel):
    """Trajectory as recorded by inference: every agent event of the turn."""

    invocation_events: list[InvocationEvent] = Field(default_factory=list)


class AgentDetails(EvalModel):
    name: str
    instructions: str = ""
    tool_declarations: list[Any] = Field(default_factory=list)


class AppDetails(EvalModel):
    agent_details: dict[str, AgentDetails] = Field(default_factory=dict)


class Invocation(EvalModel):
    invocation_id: str = ""
    user_content: genai_types.Content
    final_response: genai_types.Content | None = None
    # Smart union as in ADK: a dict with `invocation_events` is InvocationEvents, anything else (even {})
    # is IntermediateData.
    intermediate_data: IntermediateData | InvocationEvents | None = None
    creation_timestamp: float = 0.0
    duration: float | None = None
    model_duration: float | None = None
    tool_duration: float | None = None
    rubrics: list[Rubric] | None = None
    app_details: AppDetails | None = None


class SessionInput(EvalModel):
    model_config = ConfigDict(extra="allow")

    app_name: str
    user_id: str
    session_id: str | None = None
    state: JsonObject = Field(default_factory=dict)


class UserBehavior(BaseModel):
    name: str
    description: str
    behavior_instructions: list[str]
    violation_rubrics: list[str]


class UserPersona(BaseModel):
    id: str
    description: str
    behaviors: list[UserBehavior]


class ConversationScenario(EvalModel):
    starting_prompt: str
    conversation_plan: str
    # A string names one of ADK's pre-built personas; it is resolved when the simulator runs.
    user_persona: UserPersona | str | None = None

    @field_validator("user_persona")
    @classmethod
    def _known_persona(cls, value: UserPersona | str | None) -> UserPersona | str | None:
        if isinstance(value, str) and value not in PREBUILT_PERSONAS:
            raise ValueError(
                f"unknown persona id {value!r}; use one of {', '.join(PREBUILT_PERSONAS)} or a persona object"
            )
        return value


class EvalCase(EvalModel):
    model_config = ConfigDict(extra="allow")

    eval_id: str
    conversation: list[Invocation] | None = None
    conversation_scenario: ConversationScenario | None = None
    session_input: SessionInput | None = None
    creation_timestamp: float = 0.0
    rubrics: list[Rubric] | None = None
    final_session_state: JsonObject | None = Field(default_factory=dict)

    @model_validator(mode="after")
    def _conversation_xor_scenario(self) -> EvalCase:
        if (self.conversation is None) == (self.conversation_scenario is None):
            raise ValueError(
                "an eval case needs exactly one of `conversation` and `conversation_scenario`; "
                "give the expected turns in `conversation` or a `conversation_scenario` for user simulation"
            )
        return self


class EvalSet(BaseModel):
    """Top-level keys are snake_case only and unknown ones are ignored, exactly like ADK's EvalSet."""

    model_config = ConfigDict(extra="ignore")

    eval_set_id: str
    name: str | None = None
    description: str | None = None
    eval_cases: list[EvalCase]
    creation_timestamp: float = 0.0


# Accessors with ADK's exact semantics (`eval_case.get_all_tool_calls` and friends).


def _event_parts(data: InvocationEvents, attribute: str) -> list[Any]:
    return [
        getattr(part, attribute)
        for event in data.invocation_events
        if event.content and event.content.parts
        for part in event.content.parts
        if getattr(part, attribute)
    ]


def tool_calls(data: IntermediateData | InvocationEvents | None) -> list[genai_types.FunctionCall]:
    if data is None:
        return []
    if isinstance(data, IntermediateData):
        return list(data.tool_uses)
    return _event_parts(data, "function_call")


def tool_responses(data: IntermediateData | InvocationEvents | None) -> list[genai_types.FunctionResponse]:
    if data is None:
        return []
    if isinstance(data, IntermediateData):
        return list(data.tool_responses)
    return _event_parts(data, "function_response")


def content_text(content: genai_types.Content | None) -> str:
    """Text parts joined by newlines; thought parts included, as ADK does."""
    if content and content.parts:
        return "\n".join(part.text for part in content.parts if part.text)
    return ""


def dump_invocation(invocation: Invocation) -> JsonObject:
    return invocation.model_dump(mode="json", exclude_none=True)
