"""Traces `agents-cli eval generate` wrote (or our own agents-cli traces), as recorded actuals for the `replay` target.

A generated case holds its prompt (Shape A) or its history ending with the user message (Shape B), followed by the
agent's new events; those events become the turn's invocation with ADK's rules (events.py), the user message its
user content. A case with no agent event and no response was not run, so it records nothing (the replay then
says no actuals were recorded for it).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from pydantic import ValidationError

from adk_eval_gate.core.errors import InputError
from adk_eval_gate.core.json_types import JsonObject
from adk_eval_gate.core.validation import input_error_from
from adk_eval_gate.evalsets.adk_eval_schema import Invocation
from adk_eval_gate.evalsets.agents_cli_models import AgentsCliCase, AgentsCliDataset
from adk_eval_gate.targets.events import events_to_invocation


def recorded_invocation(case: AgentsCliCase, index: int, path: Path) -> Invocation | None:
    events = [
        event for turn in (case.agent_data.turns if case.agent_data else None) or [] for event in turn.events or []
    ]
    if case.prompt is not None:
        user_content, new = case.prompt, events
    else:
        users = [
            (i, event.content) for i, event in enumerate(events) if event.author == "user" and event.content is not None
        ]
        if not users:
            raise InputError(
                path,
                f"eval_cases[{index}].agent_data.turns",
                "hold no user message, and the case has no prompt",
                "replay the traces `agents-cli eval generate` wrote",
            )
        last, user_content = users[-1]
        new = events[last + 1 :]
    responses = [r.response for r in case.responses or [] if r.response is not None]
    if not new and not responses:
        return None
    payloads: list[JsonObject] = [e.model_dump(mode="json", exclude_none=True) for e in new if e.content is not None]
    invocation = events_to_invocation(payloads, user_content)
    if invocation.final_response is None and responses:
        invocation = invocation.model_copy(update={"final_response": responses[0]})
    return invocation


def load_generated(data: object, path: Path, add: Callable[[str, Invocation], None]) -> None:
    """Each run case of an agents-cli traces file, by its id (`case_<index>` without one, as datasets name it)."""
    try:
        dataset = AgentsCliDataset.model_validate(data)
    except ValidationError as exc:
        raise input_error_from(exc, path, model=AgentsCliDataset) from None
    for index, case in enumerate(dataset.eval_cases):
        invocation = recorded_invocation(case, index, path)
        if invocation is not None:
            add(case.eval_case_id or f"case_{index}", invocation)
