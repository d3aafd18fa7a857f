"""New expected turns written into an eval file in its own vocabulary, changing nothing else.

`Golden` is what one turn did in a run (final response text, tool calls and responses, intermediate messages and,
when the run recorded them, its events). `rewrite` puts goldens into the cases of one file:

* ADK `.evalset.json`: `final_response` and `intermediate_data` (its `tool_uses` form, or `invocation_events`
  when the file records events), keys spelt as the invocation spells them;
* legacy `.test.json`: `reference` and `expected_tool_use` (and `expected_intermediate_agent_responses` when the
  turn has them);
* agents-cli datasets: `reference.response` (agents-cli expects no trajectory).

The new document is built from the old one (key order kept) and written with `json_spans.patch`, so a case
that is not updated, and every value that did not change, stays byte for byte.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from adk_eval_gate.evalsets import json_spans
from adk_eval_gate.evalsets.adk_eval_schema import (
    IntermediateData,
    Invocation,
    InvocationEvents,
    tool_calls,
    tool_responses,
)
from adk_eval_gate.evalsets.legacy import legacy_eval_set_id

Json = Any


@dataclass(frozen=True)
class Golden:
    """One turn as a run took it, in plain JSON values."""

    final_texts: tuple[str, ...] | None  # None: the turn had no final response
    calls: tuple[tuple[str, Json], ...]
    responses: tuple[tuple[str, Json], ...]
    said: tuple[tuple[str, str], ...]  # intermediate messages: (author, text)
    events: tuple[Json, ...] | None  # the recorded invocation events, when the run kept events

    @property
    def trajectory(self) -> str:
        """What runs must agree on: the tool calls with their arguments, and the final answer."""
        return json.dumps([self.calls, self.final_texts], sort_keys=True)


def golden_of(invocation: Invocation) -> Golden:
    final = invocation.final_response
    texts = tuple(p.text for p in final.parts or [] if p.text) if final is not None else None
    data = invocation.intermediate_data
    said: list[tuple[str, str]] = []
    events: tuple[Json, ...] | None = None
    if isinstance(data, InvocationEvents):
        events = tuple(e.model_dump(mode="json", exclude_none=True) for e in data.invocation_events)
        for event in data.invocation_events:
            parts = event.content.parts if event.content and event.content.parts else []
            said += [(event.author, p.text) for p in parts if p.text]
    elif isinstance(data, IntermediateData):
        said = [(author, "\n".join(p.text for p in parts if p.text)) for author, parts in data.intermediate_responses]
    return Golden(
        final_texts=texts,
        calls=tuple((c.name or "", c.args or {}) for c in tool_calls(data)),
        responses=tuple((r.name or "", r.response or {}) for r in tool_responses(data)),
        said=tuple(said),
        events=events,
    )


class CaseProblem(ValueError):
    """Why one case cannot take its new expectations; the case is listed and the file keeps it as it is."""


def _key(mapping: Mapping[str, Json], snake: str) -> str:
    """The spelling the file uses for a key: its own when present, else camelCase when its siblings are."""
    head, *rest = snake.split("_")
    camel = head + "".join(word.title() for word in rest)
    if snake in mapping or camel in mapping:
        return snake if snake in mapping else camel
    return camel if any(k != k.lower() for k in mapping) else snake


def _content(old: Json, texts: tuple[str, ...]) -> Json:
    if not isinstance(old, dict):
        return {"role": "model", "parts": [{"text": t} for t in texts]}
    new = dict(old)
    parts = old.get("parts")
    if isinstance(parts, list) and len(parts) == len(texts) and all(isinstance(p, dict) for p in parts):
        new["parts"] = [{**p, "text": t} for p, t in zip(parts, texts, strict=True)]
    else:
        new["parts"] = [{"text": t} for t in texts]
    return new


def _entries(old: Json, values: Sequence[tuple[str, Json]], first: str, second: str) -> list[Json]:
    """Old entries keep their other keys (and key order); extra ones are new `{first, second}` objects."""
    old_list = old if isinstance(old, list) else []
    entries = []
    for index, (a, b) in enumerate(values):
        previous = old_list[index] if index < len(old_list) and isinstance(old_list[index], dict) else {}
        entries.append({**previous, first: a, second: b} if previous else {first: a, second: b})
    return entries


def _intermediate(old: Json, golden: Golden) -> Json:
    data = dict(old) if isinstance(old, dict) else {}
    events_key = _key(data, "invocation_events")
    if events_key in data and golden.events is not None:
        data[events_key] = list(golden.events)
        return data
    data.pop(events_key, None)
    data[_key(data, "tool_uses")] = _entries(data.get(_key(data, "tool_uses")), golden.calls, "name", "args")
    if _key(data, "tool_responses") in data:
        key = _key(data, "tool_responses")
        data[key] = _entries(data[key], golden.responses, "name", "response")
    key = _key(data, "intermediate_responses")
    if key in data or golden.said:
        data[key] = _said(data.get(key), golden.said)
    return data


def _said(old: Json, said: Sequence[tuple[str, str]]) -> list[Json]:
    """`[author, parts]` pairs; an old pair that says the same (its text parts joined) is kept as written."""
    old_list = old if isinstance(old, list) else []
    entries: list[Json] = []
    for index, (author, text) in enumerate(said):
        previous = old_list[index] if index < len(old_list) else None
        if (
            isinstance(previous, list)
            and len(previous) == 2
            and previous[0] == author
            and isinstance(previous[1], list)
        ):
            texts = [str(p["text"]) for p in previous[1] if isinstance(p, dict) and p.get("text")]
            if "\n".join(texts) == text:
                entries.append(previous)
                continue
        entries.append([author, [{"text": text}]])
    return entries


def _adk_turn(old: Json, golden: Golden) -> Json:
    new = dict(old)
    final_key = _key(old, "final_response")
    new[final_key] = None if golden.final_texts is None else _content(old.get(final_key), golden.final_texts)
    data_key = _key(old, "intermediate_data")
    if data_key in old or golden.calls or golden.said:
        new[data_key] = _intermediate(old.get(data_key), golden)
    return new


def _legacy_turn(old: Json, golden: Golden) -> Json:
    new = dict(old)
    new["reference"] = "\n".join(golden.final_texts or ())
    new["expected_tool_use"] = _entries(old.get("expected_tool_use"), golden.calls, "tool_name", "tool_input")
    if "expected_intermediate_agent_responses" in old or golden.said:
        new["expected_intermediate_agent_responses"] = [{"author": a, "text": t} for a, t in golden.said]
    return new


def _turns(old_turns: Json, goldens: Sequence[Golden], legacy: bool) -> list[Json]:
    if not isinstance(old_turns, list) or not all(isinstance(t, dict) for t in old_turns):
        raise CaseProblem("has no list of turns to update")
    if len(old_turns) != len(goldens):
        raise CaseProblem(f"has {len(old_turns)} turns but its runs took {len(goldens)}")
    turn = _legacy_turn if legacy else _adk_turn
    return [turn(old, golden) for old, golden in zip(old_turns, goldens, strict=True)]


def _agents_cli_case(old: Json, goldens: Sequence[Golden]) -> Json:
    if len(goldens) != 1:
        raise CaseProblem(f"is one agents-cli turn but its runs took {len(goldens)}")
    new = dict(old)
    reference = dict(old.get("reference") or {})
    texts = goldens[0].final_texts
    reference["response"] = None if texts is None else _content(reference.get("response"), texts)
    new["reference"] = reference
    return new


def _case_id(case: Json, index: int, agents_cli: bool) -> str | None:
    if not isinstance(case, dict):
        return None
    if agents_cli:
        found = case.get("eval_case_id", case.get("evalCaseId"))
        return found if isinstance(found, str) else f"case_{index}"
    found = case.get("eval_id", case.get("evalId"))
    return found if isinstance(found, str) else None


def _update_case(case: Json, goldens: Sequence[Golden], shape: str) -> Json:
    if shape == "agents_cli":
        return _agents_cli_case(case, goldens)
    if shape == "legacy_named":
        return {**case, "data": _turns(case.get("data"), goldens, legacy=True)}
    if case.get("conversation") is None:
        raise CaseProblem("is a conversation_scenario case: its turns are simulated, so there are none to expect")
    return {**case, "conversation": _turns(case["conversation"], goldens, legacy=False)}


@dataclass(frozen=True)
class Rewrite:
    text: str
    updated: tuple[str, ...]  # cases whose expectations changed
    already: tuple[str, ...]  # cases that already expected what the runs did
    problems: tuple[tuple[str, str], ...]  # (case id, why it was left as it is)


def rewrite(text: str, path: Path, shape: str, updates: Mapping[str, Sequence[Golden]]) -> Rewrite:
    """`text` (the file at `path`, of `shape`) with each named case's expected turns replaced by its goldens."""
    old = json.loads(text)
    new = copy.deepcopy(old)
    updated: list[str] = []
    already: list[str] = []
    problems: list[tuple[str, str]] = []
    if shape == "legacy_turns":
        case_id = legacy_eval_set_id(path)
        if case_id in updates:
            try:
                new = _turns(old, updates[case_id], legacy=True)
                (updated if _differs(old, new) else already).append(case_id)
            except CaseProblem as problem:
                problems.append((case_id, str(problem)))
        found = {case_id}
    else:
        cases = new if shape == "legacy_named" else new.get("eval_cases")
        found = set()
        for index, case in enumerate(cases if isinstance(cases, list) else []):
            named = case.get("name") if shape == "legacy_named" else _case_id(case, index, shape == "agents_cli")
            if not isinstance(named, str) or named not in updates:
                continue
            case_id = named
            found.add(case_id)
            try:
                cases[index] = _update_case(case, updates[case_id], shape)
                (updated if _differs(case, cases[index]) else already).append(case_id)
            except CaseProblem as problem:
                problems.append((case_id, str(problem)))
    problems += [(case_id, "is not in the file any more") for case_id in updates if case_id not in found]
    return Rewrite(json_spans.patch(text, old, new), tuple(updated), tuple(already), tuple(problems))


def _differs(old: Json, new: Json) -> bool:
    return json.dumps(old) != json.dumps(new)
