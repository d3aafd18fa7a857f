"""Our event → invocation conversion against ADK 2.13's `EvaluationGenerator.convert_events_to_eval_invocations`,
on random event streams covering every branch of `is_final_response()` and of event keeping."""

from __future__ import annotations

import json
import random

from google.adk.evaluation.evaluation_generator import EvaluationGenerator
from google.adk.events.event import Event
from google.adk.events.event_actions import EventActions
from google.genai import types

from adk_eval_gate.targets.events import events_to_invocation

AUTHORS = ["root", "root", "sub_agent", "helper"]


def random_part(rng: random.Random) -> types.Part:
    roll = rng.random()
    if roll < 0.35:
        return types.Part(
            text=rng.choice(["Hello there.", "", "The answer is 42.", "thinking..."]), thought=rng.random() < 0.1
        )
    if roll < 0.55:
        return types.Part(
            function_call=types.FunctionCall(
                name=rng.choice(["roll_die", "search"]), args={"n": rng.randint(0, 3)}, id=f"adk-{rng.randint(0, 999)}"
            )
        )
    if roll < 0.7:
        return types.Part(
            function_response=types.FunctionResponse(name="roll_die", response={"result": rng.randint(1, 6)})
        )
    if roll < 0.78:
        return types.Part(inline_data=types.Blob(mime_type="image/png", data=b"\x89PNG"))
    if roll < 0.86:
        return types.Part(code_execution_result=types.CodeExecutionResult(outcome="OUTCOME_OK", output="4"))
    if roll < 0.92:
        return types.Part(executable_code=types.ExecutableCode(language="PYTHON", code="print(2+2)"))
    return types.Part()


def random_event(rng: random.Random, invocation_id: str) -> Event:
    content = None
    if rng.random() < 0.85:
        content = types.Content(role="model", parts=[random_part(rng) for _ in range(rng.choice([0, 1, 1, 2, 3]))])
    return Event(
        invocation_id=invocation_id,
        author=rng.choice(AUTHORS),
        content=content,
        partial=rng.choice([None, None, False, True]),
        actions=EventActions(skip_summarization=rng.random() < 0.1 or None),
        long_running_tool_ids={"adk-1"} if rng.random() < 0.08 else None,
        error_code="MALFORMED_FUNCTION_CALL" if rng.random() < 0.08 else None,
        grounding_metadata=types.GroundingMetadata(web_search_queries=["q"]) if rng.random() < 0.1 else None,
        usage_metadata=types.GenerateContentResponseUsageMetadata(prompt_token_count=3, total_token_count=5)
        if rng.random() < 0.5
        else None,
        model_version="fake-1" if rng.random() < 0.5 else None,
    )


def normalise(invocation) -> dict:
    data = json.loads(invocation.model_dump_json(exclude_none=True))
    data.pop("creation_timestamp", None)
    return data


def test_conversion_matches_adk_on_random_event_streams():
    rng = random.Random(5)
    finals_seen = 0
    for trial in range(2000):
        invocation_id = f"e-{trial}"
        user = types.Content(role="user", parts=[types.Part(text=f"question {trial}")])
        agent_events = [random_event(rng, invocation_id) for _ in range(rng.randint(0, 7))]
        if not agent_events:
            continue
        with_user = [Event(author="user", content=user, invocation_id=invocation_id), *agent_events]
        (theirs,) = EvaluationGenerator.convert_events_to_eval_invocations(with_user)
        # In process we see Event.model_dump(); over HTTP the camelCase JSON api_server sends. Both must agree.
        for dumped in (
            [e.model_dump(exclude_none=True) for e in agent_events],
            [json.loads(e.model_dump_json(by_alias=True, exclude_none=True)) for e in agent_events],
        ):
            ours = events_to_invocation(dumped, user)
            assert normalise(ours) == normalise(theirs), trial
        finals_seen += theirs.final_response is not None
    assert finals_seen > 500
