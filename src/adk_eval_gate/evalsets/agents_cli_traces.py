"""A run of an agents-cli case, written back as `agents-cli eval generate` writes it, and the SDK's `instance`.

`eval generate` appends the agent's new events to the case's last turn (Shape B, whose last turn holds the user
message) or to a fresh `turn_0` (Shape A: no user event, the prompt stays at the top level), and the final text
to `responses`. Our Invocation keeps ADK's view of the same events (the final event's content moved to
`final_response`); `agent_events` puts it back in place. Events that carry only a state delta are not in an
Invocation, so they are missing here (docs/agents-cli.md).
"""

from __future__ import annotations

from collections.abc import Sequence

from google.genai import types as genai_types
from pydantic import BaseModel

from adk_eval_gate.core.json_types import JsonObject
from adk_eval_gate.evalsets.adk_eval_schema import EvalCase, Invocation, InvocationEvents, tool_calls, tool_responses
from adk_eval_gate.evalsets.agents_cli_dataset import original_case
from adk_eval_gate.evalsets.agents_cli_models import AgentsCliCase, dump_case


def agent_events(invocation: Invocation) -> list[JsonObject]:
    """The turn's agent events as agents-cli's AgentEvent JSON (author, content), in order."""
    final = invocation.final_response
    data = invocation.intermediate_data
    events: list[JsonObject] = []
    placed = final is None
    if isinstance(data, InvocationEvents):
        for event in data.invocation_events:
            content = event.content
            if content is None and not placed:  # ADK blanked the final event's content: it is final_response
                content, placed = final, True
            if content is not None:
                events.append({"author": event.author, "content": _json(content)})
    else:  # hand-written or replayed tool calls: one call event and one response event, as a model makes them
        calls, responses = tool_calls(data), tool_responses(data)
        if calls:
            events.append(
                {"author": "agent", "content": {"role": "model", "parts": [{"function_call": _json(c)} for c in calls]}}
            )
        if responses:
            events.append(
                {
                    "author": "agent",
                    "content": {"role": "user", "parts": [{"function_response": _json(r)} for r in responses]},
                }
            )
    if not placed and final is not None:
        events.append({"author": "agent", "content": _json(final)})
    return events


def _json(value: BaseModel) -> JsonObject:
    return value.model_dump(mode="json", exclude_none=True)


def final_text_response(events: Sequence[JsonObject]) -> JsonObject | None:
    """agents-cli's rule: the last event with non-empty text parts, its texts joined, as one text Content."""
    for event in reversed(events):
        content = genai_types.Content.model_validate(event.get("content") or {})
        texts = [part.text for part in content.parts or [] if part.text]
        if texts:
            return {"role": content.role or "model", "parts": [{"text": "".join(texts)}]}
    return None


def generated_case(case: EvalCase, invocations: Sequence[Invocation]) -> JsonObject:
    """The case as `eval generate` writes it after running it once: turns merged, `responses` filled."""
    original = original_case(case)
    if original is None:
        raise ValueError(f"case {case.eval_id!r} is not an agents-cli case")
    written = dump_case(original)
    new_events = [event for invocation in invocations for event in agent_events(invocation)]
    agent_data = written.setdefault("agent_data", {})
    turns = agent_data.setdefault("turns", [])
    if turns:
        turns[-1]["events"] = [*turns[-1].get("events", []), *new_events]
    else:
        turns.append({"turn_index": 0, "turn_id": "turn_0", "events": new_events})
    response = final_text_response(new_events)
    if response is not None:
        written["responses"] = [*written.get("responses", []), {"response": response}]
    return written


def metric_instance(generated: JsonObject, response_index: int = 0) -> JsonObject | str:
    """What the SDK hands `evaluate(instance)`: the case without `responses` and null fields, plus `response`
    and, where there is one, `prompt` (the case's, else the user scenario's starting prompt). A string says
    why there is none (the SDK's error for a case without that response)."""
    case = AgentsCliCase.model_validate(generated)
    responses = case.responses or []
    response = responses[response_index].response if response_index < len(responses) else None
    if response is None:
        return f"No response found for candidate {response_index} in EvalCase {case.eval_case_id}."
    instance = case.model_dump(mode="json", exclude_none=True, exclude={"responses"})
    instance["response"] = _json(response)
    if case.prompt is not None:
        instance["prompt"] = _json(case.prompt)
    elif case.user_scenario is not None and case.user_scenario.starting_prompt:
        instance["prompt"] = {"parts": [{"text": case.user_scenario.starting_prompt}]}
    return instance
