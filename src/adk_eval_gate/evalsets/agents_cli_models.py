"""Google agents-cli's dataset schema (the Agent Platform eval SDK's `EvalCase`, google-cloud-aiplatform 2.7).

Our own models with the SDK's acceptance rules, so a dataset that `agents-cli eval generate` reads loads here
unchanged and one it refuses is refused here too: keys take camelCase or snake_case, nested objects reject
unknown keys, and the case itself keeps unknown keys (custom metrics read them from the `instance`).
Content, Part and Tool are google-genai's own types, as in the SDK. tests/unit/evalsets/test_agents_cli_models.py
validates the same documents with both.
"""

from __future__ import annotations

import datetime

from google.genai import types as genai_types
from pydantic import BaseModel, ConfigDict
from pydantic.alias_generators import to_camel

from adk_eval_gate.core.json_types import JsonObject


class SdkModel(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="forbid")


class ResponseCandidate(SdkModel):
    response: genai_types.Content | None = None


class Message(SdkModel):
    turn_id: str | None = None
    content: genai_types.Content | None = None
    creation_timestamp: datetime.datetime | None = None
    author: str | None = None


class SdkRubricContentProperty(SdkModel):
    description: str | None = None


class SdkRubricContent(SdkModel):
    property: SdkRubricContentProperty | None = None


class SdkRubric(SdkModel):
    rubric_id: str | None = None
    content: SdkRubricContent | None = None
    type: str | None = None
    # HIGH / MEDIUM / LOW; the SDK's enum takes any other string with only a warning, so this does too.
    importance: str | None = None


class RubricGroup(SdkModel):
    group_id: str | None = None
    display_name: str | None = None
    rubrics: list[SdkRubric] | None = None


class Event(SdkModel):
    event_id: str | None = None
    content: genai_types.Content | None = None
    creation_timestamp: datetime.datetime | None = None
    author: str | None = None


class AgentConfig(SdkModel):
    agent_id: str | None = None
    agent_type: str | None = None
    description: str | None = None
    instruction: str | None = None
    tools: list[genai_types.Tool] | None = None
    sub_agents: list[str] | None = None


class AgentInfo(SdkModel):
    name: str | None = None
    agents: dict[str, AgentConfig] | None = None
    root_agent_id: str | None = None


class AgentEvent(SdkModel):
    author: str | None = None
    content: genai_types.Content | None = None
    event_time: datetime.datetime | None = None
    state_delta: JsonObject | None = None
    active_tools: list[genai_types.Tool] | None = None


class ConversationTurn(SdkModel):
    turn_index: int | None = None
    turn_id: str | None = None
    events: list[AgentEvent] | None = None


class AgentData(SdkModel):
    agents: dict[str, AgentConfig] | None = None
    turns: list[ConversationTurn] | None = None


class UserScenario(SdkModel):
    starting_prompt: str | None = None
    conversation_plan: str | None = None
    test_case_title: str | None = None


class AgentsCliCase(SdkModel):
    """One case of a `*-dataset.json`; extra keys are kept for custom metrics (`context` among them)."""

    model_config = ConfigDict(extra="allow")

    prompt: genai_types.Content | None = None
    responses: list[ResponseCandidate] | None = None
    reference: ResponseCandidate | None = None
    system_instruction: genai_types.Content | None = None
    conversation_history: list[Message] | None = None
    rubric_groups: dict[str, RubricGroup] | None = None
    eval_case_id: str | None = None
    intermediate_events: list[Event] | None = None
    agent_info: AgentInfo | None = None
    agent_data: AgentData | None = None
    user_scenario: UserScenario | None = None


class AgentsCliDataset(BaseModel):
    """The envelope `eval generate` reads and writes: `{"eval_cases": [...]}` and nothing else it needs."""

    model_config = ConfigDict(extra="ignore")

    eval_cases: list[AgentsCliCase]


def dump_case(case: AgentsCliCase) -> JsonObject:
    """Snake_case JSON without null fields: how `eval generate` writes a case and how the SDK's `instance` sees
    it."""
    return case.model_dump(mode="json", exclude_none=True)
