"""ADK's pre-EvalSet formats, converted with ADK's rules
(`local_eval_sets_manager.convert_eval_set_to_pydantic_schema`).

* flat turns: `[{"query", "expected_tool_use", "expected_intermediate_agent_responses", "reference"}]`,
  the whole file being one eval case (AgentEvaluator's `.test.json`);
* named list: `[{"name", "data": [turns], "initial_session": {...}}]`, one case per entry (`adk eval`).
  The older spelling `initial_state` (adk-samples, 2025) is accepted and ignored, as ADK's converter does.

Where ADK invents random ids and timestamps, ids here are derived from the file and the turn index and
timestamps are 0, so a converted case hashes the same on every machine (baselines depend on it).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from google.genai import types as genai_types
from pydantic import ValidationError

from adk_eval_gate.core.clip import clip
from adk_eval_gate.core.errors import InputError
from adk_eval_gate.core.json_types import JsonObject
from adk_eval_gate.core.redaction import redact_json
from adk_eval_gate.core.validation import input_error_from
from adk_eval_gate.evalsets.adk_eval_schema import EvalCase, EvalSet, IntermediateData, Invocation, SessionInput

LEGACY_TURN_KEYS = {
    "query",
    "expected_tool_use",
    "expected_intermediate_agent_responses",
    "reference",
    "mock_tool_output",
}


def legacy_eval_set_id(path: Path) -> str:
    name = path.name
    for suffix in (".evalset.json", ".test.json", ".json"):
        if name.endswith(suffix):
            return name[: -len(suffix)] or name
    return name


def _require(mapping: JsonObject, key: str, path: Path, loc: str, fix: str) -> Any:
    if key not in mapping:
        raise InputError(path, f"{loc}.{key}", "is required but missing", fix)
    return mapping[key]


def _show(value: object) -> str:
    return clip(repr(redact_json(value)), 60, "...")  # masked before `repr` escapes it and before the cut


def _kind(value: object) -> str:
    return {dict: "an object", list: "a list", str: "a string", type(None): "null", bool: "a boolean"}.get(
        type(value), type(value).__name__
    )


def _tool_call(use: Any, path: Path, where: str) -> genai_types.FunctionCall:
    """One `expected_tool_use` entry, checked in the file's own words: FunctionCall would report `name` and `args`."""
    if not isinstance(use, dict):
        raise InputError(path, where, "must be an object", 'use {"tool_name": ..., "tool_input": {...}}')
    name = _require(use, "tool_name", path, where, "name the tool")
    if not isinstance(name, str) or not name:
        raise InputError(path, f"{where}.tool_name", f"{_show(name)} is not a tool name", "give the name as a string")
    args = _require(use, "tool_input", path, where, "give the arguments (use {} for none)")
    if not isinstance(args, dict):
        raise InputError(
            path,
            f"{where}.tool_input",
            f"must be an object of argument names to values, got {_kind(args)}",
            'write the arguments as a JSON object, e.g. {"sides": 6} (use {} for none)',
        )
    return genai_types.FunctionCall(name=name, args=args)


def _convert_turn(turn: Any, path: Path, loc: str, invocation_id: str) -> Invocation:
    if not isinstance(turn, dict):
        raise InputError(
            path, loc, f"expected a turn object, got {type(turn).__name__}", 'use {"query": ..., "reference": ...}'
        )
    query = _require(turn, "query", path, loc, "give the user's message as `query`")
    if not isinstance(query, str):
        raise InputError(path, f"{loc}.query", "must be a string", "quote the user's message")
    reference = turn.get("reference", "")
    if reference is None or not isinstance(reference, str):
        raise InputError(path, f"{loc}.reference", "must be a string", "give the expected final response as text")
    uses = turn.get("expected_tool_use", [])
    if not isinstance(uses, list):
        raise InputError(
            path, f"{loc}.expected_tool_use", "must be a list", 'use [{"tool_name": ..., "tool_input": {...}}]'
        )
    calls = [_tool_call(use, path, f"{loc}.expected_tool_use[{index}]") for index, use in enumerate(uses)]
    items = turn.get("expected_intermediate_agent_responses", []) or []
    if not isinstance(items, list):
        raise InputError(
            path,
            f"{loc}.expected_intermediate_agent_responses",
            f"must be a list, got {_kind(items)}",
            'use [{"author": ..., "text": ...}]',
        )
    responses = []
    for index, item in enumerate(items):
        where = f"{loc}.expected_intermediate_agent_responses[{index}]"
        if not isinstance(item, dict):
            raise InputError(path, where, "must be an object", 'use {"author": ..., "text": ...}')
        author = _require(item, "author", path, where, "name the agent")
        text = _require(item, "text", path, where, "give the message text")
        for key, value in (("author", author), ("text", text)):
            if not isinstance(value, str):
                raise InputError(path, f"{where}.{key}", f"{_show(value)} is not a string", "quote the value")
        responses.append((author, [genai_types.Part.from_text(text=text)]))
    return Invocation(
        invocation_id=invocation_id,
        user_content=genai_types.Content(parts=[genai_types.Part.from_text(text=query)], role="user"),
        final_response=genai_types.Content(parts=[genai_types.Part.from_text(text=reference)], role="model"),
        intermediate_data=IntermediateData(tool_uses=calls, intermediate_responses=responses),
    )


def _convert_turns(turns: object, path: Path, loc: str, eval_id: str) -> list[Invocation]:
    if not isinstance(turns, list) or not turns:
        raise InputError(
            path, loc or "<root>", "must be a non-empty list of turns", 'add at least one {"query": ...} turn'
        )
    return [_convert_turn(turn, path, f"{loc}[{i}]", f"{eval_id}#{i + 1}") for i, turn in enumerate(turns)]


def is_flat_turns(data: list[Any]) -> bool:
    return any(isinstance(item, dict) and "query" in item for item in data)


def is_named_list(data: list[Any]) -> bool:
    return any(isinstance(item, dict) and "data" in item for item in data)


def convert_flat_turns(data: list[Any], path: Path) -> EvalSet:
    set_id = legacy_eval_set_id(path)
    case = EvalCase(eval_id=set_id, conversation=_convert_turns(data, path, "", set_id))
    return EvalSet(eval_set_id=set_id, name=set_id, eval_cases=[case])


def convert_named_list(data: list[Any], path: Path) -> EvalSet:
    set_id = legacy_eval_set_id(path)
    cases = []
    for index, entry in enumerate(data):
        loc = f"[{index}]"
        if not isinstance(entry, dict):
            raise InputError(
                path, loc, f"expected a case object, got {type(entry).__name__}", 'use {"name": ..., "data": [...]}'
            )
        name = _require(entry, "name", path, loc, "give each case a unique `name`")
        turns = _require(entry, "data", path, loc, "give the case's turns as `data`")
        if not isinstance(name, str) or not name:
            raise InputError(path, f"{loc}.name", "must be a non-empty string", "give each case a unique `name`")
        session = entry.get("initial_session") or {}
        if not isinstance(session, dict):
            raise InputError(
                path, f"{loc}.initial_session", "must be an object", 'use {"app_name", "user_id", "state"}'
            )
        session_input = None
        if session:
            try:
                session_input = SessionInput(
                    app_name=session.get("app_name", ""),
                    user_id=session.get("user_id", ""),
                    state=session.get("state", {}),
                )
            except ValidationError as exc:
                raise input_error_from(exc, path, prefix=[f"{loc}.initial_session"], model=SessionInput) from None
        cases.append(
            EvalCase(
                eval_id=name, conversation=_convert_turns(turns, path, f"{loc}.data", name), session_input=session_input
            )
        )
    return EvalSet(eval_set_id=set_id, name=set_id, eval_cases=cases)
