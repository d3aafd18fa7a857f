"""A real conversation as a new eval case: what can be replayed, its id, and the case in the eval file's format.

The conversation arrives as our Invocations (converted from an ADK session, an agents-cli trace or a results
file by `commands/goldens_import.py`); its actual turns become the case's expected turns. The case is appended
with `json_spans.patch`, so every case already in the file stays byte for byte. Where it came from is recorded in
a field each format's loader accepts: `session_input.source` (ADK's SessionInput allows extra keys), and a
`source` key on a legacy named case or an agents-cli case (both keep unknown keys).
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from adk_eval_gate.core.errors import InputError
from adk_eval_gate.core.json_types import JsonObject
from adk_eval_gate.evalsets import json_spans
from adk_eval_gate.evalsets.adk_eval_schema import Invocation, content_text, dump_invocation
from adk_eval_gate.evalsets.golden_rewrite import golden_of

_UNSAFE = re.compile(r"[^A-Za-z0-9_.\-]+")
MAX_ID = 100


def _get(mapping: Mapping[str, Any], snake: str) -> Any:
    if snake in mapping:
        return mapping[snake]
    head, *rest = snake.split("_")
    return mapping.get(head + "".join(word.title() for word in rest))


def _parts(event: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    content = _get(event, "content")
    parts = content.get("parts") if isinstance(content, Mapping) else None
    return [p for p in parts or [] if isinstance(p, Mapping)]


def unreplayable(events: Sequence[Any]) -> str | None:
    """Why a session's events cannot be a case that replays (None: they can). A replay sends the user's messages
    and lets the agent run: a tool whose result came from outside the agent later (long-running, a person's
    answer) or a call that never got its result has no expected turn a replay could reach."""
    calls: list[tuple[int, str, str | None]] = []
    answered_ids: set[str] = set()
    answered_names: Counter[str] = Counter()
    users = 0
    for index, event in enumerate(events):
        if not isinstance(event, Mapping):
            return f"event {index} is not an object"
        if long_running := _get(event, "long_running_tool_ids"):
            return (
                f"event {index} starts a long-running tool ({', '.join(sorted(map(str, long_running)))}): its "
                "result comes from outside the agent, so a replay cannot reach the turns after it"
            )
        if (error := _get(event, "error_code")) is not None:
            return f"event {index} is an error ({error}): the conversation did not finish as a replay would"
        author = str(_get(event, "author") or "")
        users += author == "user" and any(p.get("text") for p in _parts(event))
        for part in _parts(event):
            call, response = _get(part, "function_call"), _get(part, "function_response")
            if isinstance(call, Mapping):
                calls.append((index, str(call.get("name") or "?"), call.get("id")))
            if isinstance(response, Mapping):
                if author == "user":
                    return f"event {index}: the user answered tool {response.get('name')!r} (a person in the loop)"
                if response.get("id"):
                    answered_ids.add(str(response["id"]))
                answered_names[str(response.get("name") or "?")] += 1
    if not users:
        return "has no user message to replay"
    for index, name, call_id in calls:
        if call_id and call_id in answered_ids:
            continue
        if not call_id and answered_names[name] > 0:
            answered_names[name] -= 1
            continue
        return f"event {index} calls tool {name!r} but no response to it was recorded"
    return None


def new_case_id(wanted: str, existing: Iterable[str]) -> str:
    """`wanted` made safe for `--cases` and `/eval cases=` (letters, digits, `_ . -`), then unique in the file."""
    base = _UNSAFE.sub("_", wanted).strip("_.-")[:MAX_ID] or "imported"
    taken = set(existing)
    if base not in taken:
        return base
    number = 2
    while f"{base}_{number}" in taken:
        number += 1
    return f"{base}_{number}"


def _evalset_case(
    case_id: str, turns: Sequence[Invocation], source: str, session: JsonObject | None, created: float
) -> JsonObject:
    case: JsonObject = {"eval_id": case_id, "conversation": [dump_invocation(t) for t in turns]}
    case["session_input"] = {**(session or {"app_name": "", "user_id": "user", "state": {}}), "source": source}
    case["creation_timestamp"] = created
    return case


def _legacy_case(case_id: str, turns: Sequence[Invocation], source: str, session: JsonObject | None) -> JsonObject:
    data = []
    for turn in turns:
        golden = golden_of(turn)
        data.append(
            {
                "query": content_text(turn.user_content),
                "expected_tool_use": [{"tool_name": name, "tool_input": args} for name, args in golden.calls],
                "expected_intermediate_agent_responses": [{"author": a, "text": t} for a, t in golden.said],
                "reference": "\n".join(golden.final_texts or ()),
            }
        )
    case: JsonObject = {"name": case_id, "data": data}
    if session:
        case["initial_session"] = {k: session[k] for k in ("app_name", "user_id", "state") if k in session}
    case["source"] = source
    return case


def _content(content: Any) -> Any:
    return content.model_dump(mode="json", exclude_none=True) if content is not None else None


def _agents_cli_case(case_id: str, turns: Sequence[Invocation], source: str) -> JsonObject:
    last = turns[-1]
    case: JsonObject = {"eval_case_id": case_id}
    if len(turns) == 1:
        case["prompt"] = _content(last.user_content)
    else:  # Shape B: the earlier turns are the session's history, the last user message is the one to send
        history = [
            {
                "turn_index": i,
                "events": [
                    {"author": "user", "content": _content(t.user_content)},
                    *([{"author": "agent", "content": _content(t.final_response)}] if t.final_response else []),
                ],
            }
            for i, t in enumerate(turns[:-1])
        ]
        last_turn = {"turn_index": len(history), "events": [{"author": "user", "content": _content(last.user_content)}]}
        case["agent_data"] = {"turns": [*history, last_turn]}
    if last.final_response is not None:
        case["reference"] = {"response": _content(last.final_response)}
    case["source"] = source
    return case


@dataclass(frozen=True)
class ImportedCase:
    """A conversation about to become a case: its id, its turns, where it came from, its session and when."""

    case_id: str
    turns: Sequence[Invocation]
    source: str
    session: JsonObject | None = None
    created: float = 0.0


def add_case(text: str, path: Path, shape: str, case: ImportedCase) -> str:
    """`text` with the new case appended to its cases; everything else as it was."""
    if shape == "legacy_turns":
        raise InputError(
            path,
            None,
            "is a flat .test.json: the whole file is one case, so a case cannot be added",
            "import into an .evalset.json, a named-list .test.json or an agents-cli dataset",
        )
    case_id, turns, source, session, created = case.case_id, case.turns, case.source, case.session, case.created
    old = json.loads(text)
    new = json.loads(text)
    if shape == "evalset":
        new["eval_cases"].append(_evalset_case(case_id, turns, source, session, created))
    elif shape == "legacy_named":
        new.append(_legacy_case(case_id, turns, source, session))
    else:
        new["eval_cases"].append(_agents_cli_case(case_id, turns, source))
    return json_spans.patch(text, old, new)
