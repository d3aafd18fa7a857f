"""The keys of an eval file that its reference reader ignores, as one warning each (never an error: the file loads
as google-adk 2.13 or agents-cli 1.11 reads it).

* ADK's EvalSet ignores unknown top-level keys; its EvalCase and SessionInput keep unknown keys that nothing reads.
* ADK's legacy converter reads `query`, `reference`, `expected_tool_use` and `expected_intermediate_agent_responses`
  of a turn, `name`, `data` and `initial_session` of a named case, and nothing else.
* agents-cli's `eval generate` reads `eval_cases` and nothing else at the top level (`eval_set_id` included); a
  case keeps unknown keys for custom metrics, so only one that looks like a misspelt field is worth a word.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel
from pydantic.alias_generators import to_camel
from typing_extensions import assert_never

from adk_eval_gate.core.errors import InputError, did_you_mean
from adk_eval_gate.core.json_types import JsonObject
from adk_eval_gate.core.validation import LineLookup
from adk_eval_gate.evalsets.adk_eval_schema import EvalCase, EvalSet, SessionInput
from adk_eval_gate.evalsets.agents_cli_models import AgentsCliCase
from adk_eval_gate.evalsets.ignored_keys import ignored_key, once, unknown_keys

# Enough to show what is wrong without flooding the log for a file written by another tool.
LISTED = 20


def _fields(model: type[BaseModel]) -> set[str]:
    return set(model.model_fields) | {to_camel(name) for name in model.model_fields}


SET_KEYS = set(EvalSet.model_fields)  # snake_case only, as ADK's EvalSet
CASE_KEYS = _fields(EvalCase)
SESSION_KEYS = _fields(SessionInput)
TURN_KEYS = {"query", "reference", "expected_tool_use", "expected_intermediate_agent_responses"}
NAMED_KEYS = {"name", "data", "initial_session"}
CLI_CASE_KEYS = _fields(AgentsCliCase)

# How an eval file is read (loader.py): ADK's EvalSet, the two legacy .test.json forms, or an agents-cli dataset.
EvalSetShape = Literal["evalset", "legacy_turns", "legacy_named", "agents_cli"]


def ignored(data: Any, path: Path, shape: EvalSetShape) -> tuple[InputError, ...]:
    """Warnings for `data` read as `shape`, at most LISTED."""
    lines = once(path)
    found: list[InputError] = []
    match shape:
        case "evalset":
            found += _evalset(data, path, lines)
        case "legacy_turns":
            for index, turn in enumerate(data):
                found += _turn(turn, (index,), path, lines)
        case "legacy_named":
            found += _named(data, path, lines)
        case "agents_cli":
            found += _agents_cli(data, path, lines)
        case unknown:
            assert_never(unknown)
    return tuple(found[:LISTED])


def _evalset(data: JsonObject, path: Path, lines: LineLookup) -> list[InputError]:
    found = [
        ignored_key(path, (key,), SET_KEYS, "is not an EvalSet field, so ADK ignores it", lines)
        for key in unknown_keys(data, SET_KEYS)
    ]
    for index, case in enumerate(data.get("eval_cases") or []):
        where: tuple[str | int, ...] = ("eval_cases", index)
        found += [
            ignored_key(
                path, (*where, key), CASE_KEYS, "is not an EvalCase field: ADK keeps it but nothing reads it", lines
            )
            for key in unknown_keys(case, CASE_KEYS)
        ]
        session = case.get("session_input", case.get("sessionInput")) if isinstance(case, dict) else None
        found += [
            ignored_key(
                path,
                (*where, "session_input", key),
                SESSION_KEYS,
                "is not a SessionInput field, so ADK ignores it",
                lines,
            )
            for key in unknown_keys(session, SESSION_KEYS)
        ]
    return found


def _turn(turn: Any, where: tuple[str | int, ...], path: Path, lines: LineLookup) -> list[InputError]:
    found = []
    for key in unknown_keys(turn, TURN_KEYS):
        effect = "is not read by ADK's legacy converter"
        if key == "mock_tool_output":
            effect += " (ADK 2.x has no tool mocks: the agent's tools run for real)"
        found.append(ignored_key(path, (*where, key), TURN_KEYS, effect, lines))
    return found


def _named(data: list[Any], path: Path, lines: LineLookup) -> list[InputError]:
    found = []
    for index, entry in enumerate(data):
        for key in unknown_keys(entry, NAMED_KEYS):
            effect = "is not read by ADK's legacy converter"
            if key == "initial_state":
                effect += ", so the case starts with an empty session state"
                found.append(
                    InputError(
                        path,
                        f"[{index}].{key}",
                        effect,
                        "did you mean `initial_session: {state: ...}`?",
                        line=lines((index, key)),
                    )
                )
                continue
            found.append(ignored_key(path, (index, key), NAMED_KEYS, effect, lines))
        turns = entry.get("data") if isinstance(entry, dict) else None
        for number, turn in enumerate(turns if isinstance(turns, list) else []):
            found += _turn(turn, (index, "data", number), path, lines)
    return found


def _agents_cli(data: JsonObject, path: Path, lines: LineLookup) -> list[InputError]:
    name = path.name[: -len(".json")] if path.name.endswith(".json") else path.stem
    found = []
    for key in unknown_keys(data, {"eval_cases"}):
        effect = "is ignored by agents-cli, which reads `eval_cases` only"
        if key in ("eval_set_id", "evalSetId"):
            effect += f" (this dataset's cases are compared under its file's name, {name!r})"
        found.append(InputError(path, key, effect, "remove it if it is not meant for another tool", line=lines((key,))))
    for index, case in enumerate(data.get("eval_cases") or []):
        for key in unknown_keys(case, CLI_CASE_KEYS):
            guess = did_you_mean(key, sorted(CLI_CASE_KEYS))
            if guess:  # any other key is data for custom metrics (`context` and the like)
                found.append(
                    ignored_key(
                        path,
                        ("eval_cases", index, key),
                        CLI_CASE_KEYS,
                        "is not an EvalCase field: agents-cli only passes it to custom metrics",
                        lines,
                    )
                )
    return found
