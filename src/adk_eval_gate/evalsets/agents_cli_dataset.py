"""An agents-cli dataset (`{"eval_cases": [...]}`, `tests/eval/datasets/*-dataset.json`) as an ADK EvalSet.

Each case becomes one of our EvalCases with a single invocation, so targets, scoring, baselines and reports
run unchanged:

* Shape A (`prompt`): the prompt is the turn's user content.
* Shape B (`agent_data.turns` ending with a user event, the "N+1" pattern): the last user event is the turn's user
  content; every earlier event is the session's history, seeded before the turn runs (`prior_events`), as
  `eval generate` posts them with the session.

`reference.response` is the turn's expected final response. The case as written is kept on the EvalCase
(`AGENTS_CLI_KEY`), so traces are written back in agents-cli's format and code metrics get the SDK's `instance`.
A case without `eval_case_id` is named `case_<index>` (agents-cli itself names cases by position).
"""

from __future__ import annotations

from pathlib import Path

from google.genai import types as genai_types
from pydantic import ValidationError

from adk_eval_gate.core.errors import InputError
from adk_eval_gate.core.json_types import JsonObject
from adk_eval_gate.core.validation import input_error_from
from adk_eval_gate.evalsets.adk_eval_schema import EvalCase, EvalSet, Invocation
from adk_eval_gate.evalsets.agents_cli_models import AgentEvent, AgentsCliCase, AgentsCliDataset, dump_case

# Extra key on our EvalCase: {"case": <the case as written>}. Hashed with the case (results' case_hash), so it holds
# what the case asks and expects, not where it sits in the file.
AGENTS_CLI_KEY = "agents_cli"
FIX = 'give each case a `prompt` (Content) or `agent_data` whose turns end with a "user" event'


# What marks a case as one tool's: ADK's EvalCase and the SDK's EvalCase share no field.
ADK_CASE_KEYS = frozenset({"eval_id", "evalId", "conversation", "conversation_scenario", "conversationScenario"})
CLI_CASE_KEYS = frozenset({"prompt", "agent_data", "agentData", "eval_case_id", "evalCaseId"})


def is_agents_cli_dataset(data: object, path: Path) -> bool:
    """Which reader the file is for, decided by its cases as the two tools decide: ADK reads an `eval_cases` of
    ADK cases (and ignores any other top-level key), agents-cli reads an `eval_cases` of SDK cases (and ignores any
    other top-level key, `eval_set_id` included). Cases of one tool only settle it; otherwise the file's name does
    (`*-dataset.json` is agents-cli's, `*.evalset.json` / `*.test.json` ADK's), then `eval_set_id` (ADK's)."""
    if not isinstance(data, dict):
        return False
    cases = data.get("eval_cases")
    keys = [set(case) for case in cases if isinstance(case, dict)] if isinstance(cases, list) else []
    adk = any(k & ADK_CASE_KEYS for k in keys)
    cli = any(k & CLI_CASE_KEYS for k in keys)
    named = "eval_set_id" in data or "evalSetId" in data
    if adk != cli:  # ADK cases in a `*-dataset.json` without an id: neither tool reads it, agents-cli's error helps
        return cli or (not named and path.name.endswith("-dataset.json"))
    if path.name.endswith("-dataset.json"):
        return True
    if path.name.endswith((".evalset.json", ".test.json")):
        return False
    return not named and cli


def eval_set_id_for(path: Path) -> str:
    """`basic-dataset.json` → `basic-dataset`: unique per file in a folder, stable across runs."""
    return path.name[: -len(".json")] if path.name.endswith(".json") else path.stem


def parse_dataset(data: object, path: Path) -> EvalSet:
    if not isinstance(data, dict) or "eval_cases" not in data:
        raise InputError(
            path, "eval_cases", "is missing", 'write {"eval_cases": [{"eval_case_id": ..., "prompt": ...}]}'
        )
    _check_wrapped_references(data["eval_cases"], path)
    try:
        dataset = AgentsCliDataset.model_validate(data)
    except ValidationError as exc:
        raise input_error_from(exc, path, model=AgentsCliDataset) from None
    if not dataset.eval_cases:
        raise InputError(path, "eval_cases", "is empty", "add at least one eval case")
    cases = [_convert(case, index, path) for index, case in enumerate(dataset.eval_cases)]
    first: dict[str, int] = {}
    for index, case in enumerate(cases):
        if case.eval_id in first:
            raise InputError(
                path,
                f"eval_cases[{index}].eval_case_id",
                f"duplicate {case.eval_id!r} (also eval_cases[{first[case.eval_id]}])",
                "give every case a unique eval_case_id",
            )
        first[case.eval_id] = index
    return EvalSet(eval_set_id=eval_set_id_for(path), eval_cases=cases)


def _check_wrapped_references(cases: object, path: Path) -> None:
    """The one mistake everyone makes moving from ADK: `reference` is `{"response": Content}`, not a Content."""
    for index, case in enumerate(cases if isinstance(cases, list) else []):
        reference = case.get("reference") if isinstance(case, dict) else None
        if isinstance(reference, dict) and "response" not in reference and {"parts", "role"} & set(reference):
            raise InputError(
                path,
                f"eval_cases[{index}].reference",
                "is a bare Content; agents-cli wraps it",
                'write "reference": {"response": {"role": "model", "parts": [...]}}',
            )


def last_user_message(case: AgentsCliCase, index: int, path: Path) -> tuple[list[AgentEvent], genai_types.Content]:
    """(prior events, the user message to send), with `eval generate`'s rules and our one-line errors."""
    where = f"eval_cases[{index}]"
    turns = (case.agent_data.turns if case.agent_data else None) or []
    if case.prompt is not None and turns:
        raise InputError(
            path, f"{where}.prompt", "and agent_data.turns are both given, so the message to send is ambiguous", FIX
        )
    if case.prompt is not None:
        if not case.prompt.parts:
            raise InputError(path, f"{where}.prompt.parts", "is empty: there is nothing to send", "add a text part")
        return [], case.prompt
    events = [event for turn in turns for event in turn.events or []]
    if not events:
        raise InputError(path, where, "has neither `prompt` nor `agent_data.turns` with events", FIX)
    last = events[-1]
    last_at = f"{where}.agent_data.turns[{len(turns) - 1}].events"
    if last.author != "user":
        raise InputError(
            path,
            last_at,
            f"end with an event by {last.author!r}: the agent answers the last user message, so there is none",
            'append the user message to send as the last event, with author "user"',
        )
    if last.content is None or not last.content.parts:
        raise InputError(path, last_at, "end with a user event without content", "give the last user event content")
    prior = events[:-1]
    if last.state_delta:  # the delta still reaches the session, as `eval generate` keeps it
        prior.append(last.model_copy(update={"content": None}))
    return prior, last.content


def _convert(case: AgentsCliCase, index: int, path: Path) -> EvalCase:
    try:
        _prior, message = last_user_message(case, index, path)
    except InputError as exc:
        if not case.responses:
            raise
        # `eval generate`'s output: the agent's answer is already appended, so there is nothing left to send
        raise InputError(
            exc.file,
            exc.field,
            f"{exc.problem} (the case has responses: these are traces that were already run)",
            "list the dataset itself under evalsets; replay traces with target: {kind: replay, actuals: [<file>]}",
        ) from None
    if case.eval_case_id is not None and not case.eval_case_id.strip():
        raise InputError(path, f"eval_cases[{index}].eval_case_id", "is empty", "give every case a unique id")
    user_content = message if message.role else message.model_copy(update={"role": "user"})
    expected = case.reference.response if case.reference else None
    try:
        written = dump_case(case)
    except (ValueError, RecursionError):  # pydantic refuses to write data nested hundreds of levels deep
        raise InputError(
            path, f"eval_cases[{index}]", "is nested too deeply to keep", "flatten the case's own fields"
        ) from None
    # the case as agents-cli wrote it rides along as an extra field, for the replay and the judges to read
    extra: JsonObject = {AGENTS_CLI_KEY: {"case": written}}
    return EvalCase(
        eval_id=case.eval_case_id or f"case_{index}",
        conversation=[Invocation(invocation_id="turn_0", user_content=user_content, final_response=expected)],
        **extra,
    )


def original_case(case: EvalCase) -> AgentsCliCase | None:
    """The agents-cli case an EvalCase was made from, or None for an ADK eval case."""
    data = (case.model_extra or {}).get(AGENTS_CLI_KEY)
    return AgentsCliCase.model_validate(data["case"]) if isinstance(data, dict) else None


def prior_events(case: EvalCase) -> list[JsonObject]:
    """A Shape B case's history as ADK Event payloads (camelCase, a state delta under `actions`), for a session
    created before the turn runs; [] for every other case."""
    original = original_case(case)
    if original is None or original.prompt is not None:
        return []
    prior, _ = last_user_message(original, 0, Path("dataset"))
    payloads = []
    for event in prior:
        payload = event.model_dump(mode="json", by_alias=True, exclude_none=True)
        delta = payload.pop("stateDelta", None)
        payload.pop("activeTools", None)  # the agent's tool list at the time, not an event of the session
        payload.pop("eventTime", None)
        if delta:
            payload["actions"] = {"stateDelta": delta}
        payloads.append(payload)
    return payloads
