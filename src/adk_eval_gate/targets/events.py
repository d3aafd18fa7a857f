"""Agent events → the actual Invocation of one turn, with ADK 2.13's rules
(`EvaluationGenerator.convert_events_to_eval_invocations`).

Events arrive as ADK `Event` objects from an in-process runner, or as JSON-like dicts in either spelling: the
camelCase JSON `adk api_server` returns, or whatever a `command` agent prints. Reading fields by name keeps
the `http` and `command` targets free of google-adk.

Per turn:
* the final response is the content of the **last** event that `is_final_response()` and has parts (a later
  final event without text does not replace one with text);
* the kept events are those whose parts hold a function call, function response, text or inline data, plus
  grounding-only events; the final event's content is blanked unless it carries function calls, so its text
  is not counted twice.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, TypeVar

from google.genai import types as genai_types
from pydantic import BaseModel

from adk_eval_gate.evalsets.adk_eval_schema import AppDetails, Invocation, InvocationEvent, InvocationEvents

_Model = TypeVar("_Model", bound=BaseModel)

_USER = "user"


def _get(event: object, snake: str) -> Any:
    """A field of an event given as a dict (either spelling) or as ADK's own Event object."""
    if not isinstance(event, Mapping):
        return getattr(event, snake, None)
    if snake in event:
        return event[snake]
    head, *rest = snake.split("_")
    return event.get(head + "".join(word.title() for word in rest))


def _parts(content: genai_types.Content | None) -> list[genai_types.Part]:
    return list(content.parts or []) if content is not None else []


def is_final_response(event: object, content: genai_types.Content | None) -> bool:
    actions = _get(event, "actions") or {}
    if _get(actions, "skip_summarization") or _get(event, "long_running_tool_ids"):
        return True
    parts = _parts(content)
    calls = any(p.function_call for p in parts)
    partial = bool(_get(event, "partial"))
    if _get(event, "error_code") and not partial and not calls:
        return True
    responses = any(p.function_response for p in parts)
    trailing_code_result = bool(parts) and parts[-1].code_execution_result is not None
    return not calls and not responses and not partial and not trailing_code_result


def content_of(event: object) -> genai_types.Content | None:
    raw = _get(event, "content")
    if raw is None or isinstance(raw, genai_types.Content):
        return raw
    return genai_types.Content.model_validate(raw)


def _optional(model: type[_Model], raw: object) -> _Model | None:
    if raw is None or isinstance(raw, model):
        return raw
    return model.model_validate(raw)


def events_to_invocation(
    events: Sequence[Any],
    user_content: genai_types.Content,
    *,
    invocation_id: str = "",
    creation_timestamp: float = 0.0,
    duration: float | None = None,
    app_details: AppDetails | None = None,
) -> Invocation:
    final_response: genai_types.Content | None = None
    final_index: int | None = None
    kept: list[tuple[int, Any, genai_types.Content | None]] = []
    for index, event in enumerate(events):
        author = (_get(event, "author") or "agent").lower()
        content = content_of(event)
        if author == _USER:
            if content is not None:
                user_content = content
            continue
        invocation_id = invocation_id or _get(event, "invocation_id") or ""
        grounding = _get(event, "grounding_metadata")
        parts = _parts(content)
        if parts:
            if is_final_response(event, content):
                final_has_text = final_response is not None and any(p.text for p in _parts(final_response))
                if not final_has_text or any(p.text for p in parts):
                    final_response, final_index = content, index
            if grounding is not None or any(
                p.function_call or p.function_response or p.text or p.inline_data for p in parts
            ):
                kept.append((index, event, content))
        elif grounding is not None:
            kept.append((index, event, content))

    invocation_events = [
        InvocationEvent(
            author=_get(event, "author"),
            content=content if index != final_index or any(p.function_call for p in _parts(content)) else None,
            grounding_metadata=_optional(genai_types.GroundingMetadata, _get(event, "grounding_metadata")),
            usage_metadata=_optional(genai_types.GenerateContentResponseUsageMetadata, _get(event, "usage_metadata")),
            model_version=_get(event, "model_version"),
        )
        for index, event, content in kept
    ]
    return Invocation(
        invocation_id=invocation_id,
        user_content=user_content,
        final_response=final_response,
        intermediate_data=InvocationEvents(invocation_events=invocation_events),
        creation_timestamp=creation_timestamp,
        duration=duration,
        app_details=app_details,
    )
