"""`goldens import`: a real conversation as a new eval case, its actual turns expected (docs/goldens.md).

Sources, told apart by content:
* an ADK session: the JSON `adk api_server` returns for GET /apps/{app}/users/{user}/sessions/{id}, which is what
  `adk web` exports (or that object under `"session"`). Converted with google-adk's own
  `EvaluationGenerator.convert_events_to_eval_invocations` (what `adk web`'s "add session to eval set" runs) when
  google-adk is installed, else with the gate's copy of its rules (`targets/events.py`);
* agents-cli traces (`eval generate`'s output), one case of them;
* a results file, one case: the trajectory most of its runs took (as `goldens update` picks it).
A dry run by default, like `goldens update`: the diff is printed and `--write` applies it.
"""

from __future__ import annotations

import argparse
import sys
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from adk_eval_gate.core.clip import short_sha
from adk_eval_gate.core.errors import InputError
from adk_eval_gate.core.files import existing_input, load_json, read_bytes, read_text, write_bytes_atomic
from adk_eval_gate.core.json_types import JsonObject
from adk_eval_gate.evalsets.adk_eval_schema import Invocation

FIX_SESSION = "import a session whose every tool call got its response in the same conversation"


@dataclass(frozen=True)
class Conversation:
    turns: tuple[Invocation, ...]
    wanted_id: str
    source: str
    session: JsonObject | None = None
    created: float = 0.0


def _session_of(data: object) -> JsonObject | None:
    if isinstance(data, dict) and isinstance(data.get("session"), dict):
        data = data["session"]
    if isinstance(data, dict) and isinstance(data.get("events"), list) and not {"eval_cases", "eval_sets"} & set(data):
        return data
    return None


def _adk_turns(session: JsonObject) -> list[Invocation] | None:
    """google-adk's own conversion, or None when google-adk is not installed."""
    try:
        from google.adk.evaluation.evaluation_generator import EvaluationGenerator
        from google.adk.sessions import Session
    except ImportError:
        return None
    from pydantic import ValidationError

    try:
        parsed = Session.model_validate(session)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise InputError(None, where, f"is not an ADK session field: {first['msg']}", FIX_SESSION) from None
    converted = EvaluationGenerator.convert_events_to_eval_invocations(parsed.events)
    return [Invocation.model_validate(i.model_dump(mode="json", exclude_none=True)) for i in converted]


def _own_turns(events: list[Any]) -> list[Invocation]:
    from google.genai import types as genai_types

    from adk_eval_gate.targets.events import events_to_invocation

    groups: dict[str, list[Any]] = defaultdict(list)
    for event in events:
        groups[str(event.get("invocationId", event.get("invocation_id", "")))].append(event)
    return [
        events_to_invocation(group, genai_types.Content(parts=[]), invocation_id=key) for key, group in groups.items()
    ]


def from_session(session: JsonObject, path: Path) -> Conversation:
    from adk_eval_gate.evalsets.session_import import unreplayable

    for snake, camel, default in (("id", "id", path.stem), ("app_name", "appName", ""), ("user_id", "userId", "user")):
        if snake not in session and camel not in session:  # an export of the events alone
            session = {**session, camel: default}
    if why := unreplayable(session["events"]):
        raise InputError(path, "events", f"cannot be replayed: {why}", FIX_SESSION)
    try:
        turns = _adk_turns(session)
    except InputError as exc:
        raise exc.with_file(path) from None
    if turns is None:
        turns = _own_turns(session["events"])
    app = str(session.get("appName", session.get("app_name", "")))
    user = str(session.get("userId", session.get("user_id", "user")))
    updated = session.get("lastUpdateTime", session.get("last_update_time", 0.0))
    session_id = str(session.get("id") or path.stem)
    return Conversation(
        tuple(turns),
        f"session_{session_id}",
        f"adk session {app}/{user}/{session_id} ({path.name})",
        {"app_name": app, "user_id": user, "state": {}},
        float(updated) if isinstance(updated, (int, float)) else 0.0,
    )


def _pick(found: JsonObject, wanted: str | None, path: Path) -> str:
    if wanted is None and len(found) == 1:
        return next(iter(found))
    if wanted is None or wanted not in found:
        names = ", ".join(sorted(found)[:10]) or "none"
        raise InputError(path, "--source-case", f"names no case of it (cases: {names})", "pass --source-case ID")
    return wanted


def from_traces(data: object, path: Path, wanted: str | None) -> Conversation:
    from adk_eval_gate.targets.agents_cli_replay import load_generated

    found: dict[str, Invocation] = {}

    def keep(case_id: str, invocation: Invocation) -> None:
        found.setdefault(case_id, invocation)

    load_generated(data, path, keep)
    case_id = _pick(found, wanted, path)
    return Conversation((found[case_id],), case_id, f"agents-cli trace {path.name}:{case_id}")


def from_results(path: Path, wanted: str | None, base: Path) -> Conversation:
    from adk_eval_gate.commands.goldens_update import agreement
    from adk_eval_gate.results.build import read_results

    results = read_results(path)
    cases = {f"{s.eval_set_id}:{c.eval_id}": (s, c) for s in results.eval_sets for c in s.cases}
    if wanted is not None and wanted not in cases:
        ends = [key for key in cases if key.split(":", 1)[1] == wanted]
        wanted = ends[0] if len(ends) == 1 else wanted
    key = _pick(cases, wanted, path)
    eval_set, case = cases[key]
    agreed = agreement(case, unanimous=False)
    if agreed.run is None:
        raise InputError(path, key, f"cannot be imported: {agreed.problem}", "import a case whose runs agree")
    invocations = case.runs[agreed.run].actual_invocations or []
    turns = tuple(Invocation.model_validate(i) for i in invocations)
    sha = f" at {short_sha(results.git.sha)}" if results.git.sha else ""
    session = _original_session(base / eval_set.file, case.eval_id)
    return Conversation(turns, case.eval_id, f"results {path.name}{sha}: {key} run {agreed.run}", session)


def _original_session(path: Path, eval_id: str) -> JsonObject | None:
    """The session the case ran with, so the imported copy runs the same way; None when it cannot be read."""
    from adk_eval_gate.evalsets.loader import load_eval_set

    try:
        loaded = load_eval_set(path)
    except InputError:
        return None
    case = next((c for c in loaded.eval_set.eval_cases if c.eval_id == eval_id), None)
    if case is None or case.session_input is None:
        return None
    session = case.session_input.model_dump(mode="json", exclude_none=True)
    session.pop("source", None)
    return session


def read_conversation(args: argparse.Namespace, path: Path) -> Conversation:
    from adk_eval_gate.evalsets.agents_cli_dataset import is_agents_cli_dataset

    data = load_json(path, "import source")
    if (session := _session_of(data)) is not None:
        return from_session(session, path)
    if isinstance(data, dict) and "schema_version" in data and "eval_sets" in data:
        return from_results(path, args.source_case, Path(args.config).parent if args.config else Path.cwd())
    if is_agents_cli_dataset(data, path):
        return from_traces(data, path, args.source_case)
    raise InputError(
        path,
        None,
        "is neither an ADK session, agents-cli traces nor a results file",
        "pass the JSON of GET /apps/{app}/users/{user}/sessions/{id}, `eval generate`'s output or a results.json",
    )


def import_case(args: argparse.Namespace) -> int:
    from adk_eval_gate.commands.goldens_update import BOM, check_still_loads, unified_diff
    from adk_eval_gate.evalsets.loader import load_eval_set
    from adk_eval_gate.evalsets.session_import import ImportedCase, add_case, new_case_id

    if not args.source or not args.into:
        raise InputError(None, "goldens import", "needs --from and --into", "pass --from SOURCE --into EVALSET")
    source = existing_input(args.source, "--from")
    into = existing_input(args.into, "--into")
    conversation = read_conversation(args, source)
    if not conversation.turns:
        raise InputError(source, None, "holds no turn to import", "pick a conversation with at least one message")
    target = load_eval_set(into)
    ids = {c.eval_id for c in target.eval_set.eval_cases}
    if args.new_id and args.new_id in ids:
        raise InputError(into, "--id", f"{args.new_id!r} is already a case of it", "pick another id")
    case_id = new_case_id(args.new_id or conversation.wanted_id, ids)
    text = read_text(into, "eval set")
    imported = ImportedCase(
        case_id, conversation.turns, conversation.source, conversation.session, conversation.created
    )
    new = add_case(text, into, target.shape, imported)
    check_still_loads(new, into)
    sys.stdout.write(unified_diff(text, new, into.as_posix()))
    if args.write:
        write_bytes_atomic(into, (BOM if read_bytes(into, "eval set").startswith(BOM) else b"") + new.encode())
    verb = "added" if args.write else "would add"
    print(f"{verb} case {case_id!r} to {into} from {conversation.source}", file=sys.stderr)
    if not args.write:
        print("dry run: nothing written; add --write to apply", file=sys.stderr)
    return 0
