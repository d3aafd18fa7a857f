"""ADK 2.13's multi-turn Vertex AI metrics: `multi_turn_task_success_v1`, `multi_turn_trajectory_quality_v1` and
`multi_turn_tool_use_quality_v1`, sent as ADK's `_MultiTurnVertexiAiEvalFacade` sends them through the Vertex AI SDK.

* They are predefined metrics of the evaluation service (the SDK's `SUPPORTED_PREDEFINED_METRICS`): the request
  names the metric and carries the conversation as `agent_eval_data`; no prompt template is involved.
* The whole conversation is judged once: every turn becomes a `ConversationTurn` (the user's message, each
  recorded agent event that has content, the final response) and every agent the invocations describe becomes an
  `AgentConfig`. Hand-authored `intermediate_data` (tool_uses) is not sent, as in ADK.
* The last invocation carries the score, the earlier ones none (ADK marks them NOT_EVALUATED); the case score is
  that one score. No score is an error, never a quiet not-evaluated.
* Credentials, endpoint, pool, budget, retries and cache: as for `safety_v1` (vertex_service.py); the cache key
  leaves out the ids a live run draws at random, so an unchanged conversation costs no second request.

`response_evaluation_score` is ADK's `_SingleTurnVertexAiEvalFacade` with the SDK's COHERENCE metric: not a
predefined metric but an LLM metric whose definition (prompt template, judge settings) the SDK downloads at run time
(vertex_service.llm_metric_template). Each invocation is one request with safety_v1's instance; the service's score
(1-5) is the invocation's, the case score the mean of the scored invocations, passed when >= the threshold (1-5).
"""

from __future__ import annotations

from collections.abc import Sequence

from google.genai import types as genai_types
from pydantic import field_validator

from adk_eval_gate.core.json_types import JsonObject
from adk_eval_gate.criteria.engine.criterion import (
    Cause,
    InvocationScore,
    JudgeScorer,
    MetricOutcome,
    ScoringInput,
    Status,
    UnparseableReply,
    status_for,
)
from adk_eval_gate.criteria.engine.judge import Judge
from adk_eval_gate.criteria.engine.options import ThresholdOptions, check_threshold
from adk_eval_gate.criteria.engine.vertex_service import (
    SERVICE,
    VertexEvaluation,
    answer_detail,
    answer_score,
    llm_metric_spec,
    llm_metric_template,
    missing_project,
)
from adk_eval_gate.criteria.safety import score_single_turns
from adk_eval_gate.evalsets.adk_eval_schema import Invocation, InvocationEvents
from adk_eval_gate.llm.cache import cache_key
from adk_eval_gate.llm.client import LlmUnavailable

MULTI_TURN = (
    "multi_turn_task_success_v1",
    "multi_turn_trajectory_quality_v1",
    "multi_turn_tool_use_quality_v1",
)
VERSION = "1"
COHERENCE = "response_evaluation_score"
# The SDK metric ADK 2.13 asks for, and the version of its definition the SDK then downloads.
COHERENCE_METRIC, COHERENCE_METRIC_VERSION = "coherence", "v1"
COHERENCE_VERSION = "1"
# Every criterion that runs on the Vertex AI evaluation service, so needs its credentials rather than a judge model's.
VERTEX_METRICS = ("safety_v1", *MULTI_TURN, COHERENCE)


class CoherenceOptions(ThresholdOptions):
    """ADK's coherence scores run 1-5, so its threshold does too: an ADK config with `response_evaluation_score: 4`
    must load rather than be rejected as out of range."""

    @field_validator("threshold", mode="before")
    @classmethod
    def _threshold(cls, value: object) -> float:
        if isinstance(value, (int, float)) and not isinstance(value, bool) and not 0.0 <= value <= 5.0:
            raise ValueError(f"threshold {value!r} is outside ADK's coherence scale; use a number between 1 and 5")
        if isinstance(value, (int, float)) and not isinstance(value, bool) and value > 1.0:
            return float(value)
        return check_threshold(value)


def _content(content: genai_types.Content | None) -> JsonObject | None:
    return None if content is None else content.model_dump(mode="json", exclude_none=True)


def _event(author: str | None, content: genai_types.Content | None) -> JsonObject:
    event: JsonObject = {"author": author}
    if (dumped := _content(content)) is not None:
        event["content"] = dumped
    return event


def _turn(index: int, invocation: Invocation) -> JsonObject:
    events = [_event("user", invocation.user_content)]
    if isinstance(invocation.intermediate_data, InvocationEvents):
        events += [
            _event(e.author, e.content) for e in invocation.intermediate_data.invocation_events if e.content is not None
        ]
    events.append(_event("agent", invocation.final_response))
    return {"turn_index": index, "turn_id": invocation.invocation_id, "events": events}


def _tool(declaration: object) -> JsonObject:
    # Recorded runs hold plain dicts (camelCase or snake_case); the SDK validates them into genai Tools.
    tool = declaration if isinstance(declaration, genai_types.Tool) else genai_types.Tool.model_validate(declaration)
    return tool.model_dump(mode="json", exclude_none=True)


def agent_data(invocations: Sequence[Invocation]) -> JsonObject:
    """The conversation as the SDK's `AgentData` goes on the wire (snake_case, nothing unset)."""
    agents: dict[str, JsonObject] = {}
    for invocation in invocations:
        details = invocation.app_details.agent_details if invocation.app_details else {}
        for name, agent in details.items():
            if name not in agents:  # the first invocation that describes an agent wins, as in ADK
                agents[name] = {
                    "agent_id": agent.name,
                    "instruction": agent.instructions,
                    "tools": [_tool(t) for t in agent.tool_declarations],
                }
    return {"agents": agents, "turns": [_turn(i, invocation) for i, invocation in enumerate(invocations)]}


def instance_for(invocations: Sequence[Invocation]) -> JsonObject:
    # The SDK sends an empty prompt for a multi-turn metric: the conversation lives in agent_eval_data.
    return {"prompt": {"contents": {"contents": []}}, "agent_eval_data": agent_data(invocations)}


def _without_run_ids(instance: JsonObject) -> JsonObject:
    """The instance minus what every live run draws at random (invocation and tool-call ids), so that a re-run
    with the same conversation is answered from the cache; the request itself carries them, as ADK's does."""
    turns = []
    for turn in instance["agent_eval_data"]["turns"]:
        events = []
        for event in turn["events"]:
            parts = [
                {
                    k: (
                        {f: v for f, v in value.items() if f != "id"}
                        if k in ("function_call", "function_response") and isinstance(value, dict)
                        else value
                    )
                    for k, value in part.items()
                }
                for part in event.get("content", {}).get("parts", [])
            ]
            events.append(
                {**event, **({"content": {**event["content"], "parts": parts}} if "content" in event else {})}
            )
        turns.append({**turn, "turn_id": None, "events": events})
    return {**instance, "agent_eval_data": {**instance["agent_eval_data"], "turns": turns}}


def multi_turn_scorer(metric: str) -> JudgeScorer[ThresholdOptions]:
    async def score(data: ScoringInput, options: ThresholdOptions, judge: Judge) -> MetricOutcome:
        if not data.actual:
            return MetricOutcome.not_evaluated("no actual invocations")
        if reason := missing_project(metric):
            return MetricOutcome.not_evaluated(reason, len(data.actual), Cause.NO_CREDENTIALS)
        instance = instance_for(data.actual)
        vertex = VertexEvaluation(judge.llm.settings.timeout)
        key = cache_key(purpose=metric, version=VERSION, instance=_without_run_ids(instance))
        answer = await judge.llm.cached_call(
            metric,
            SERVICE,
            key,
            lambda: vertex.evaluate(metric, instance),
            credentials=lambda: missing_project(metric),
        )
        value, detail = answer_score(answer), answer_detail(answer)
        if value is None:
            if answer.get("error"):
                raise LlmUnavailable(f"the evaluation service returned no score: {detail}")
            raise UnparseableReply(f"the evaluation service returned no score{f': {detail}' if detail else ''}")
        earlier = [InvocationScore(None, Status.NOT_EVALUATED)] * (len(data.actual) - 1)
        status = status_for(value, options.threshold)
        return MetricOutcome(value, status, [*earlier, InvocationScore(value, status, detail)])

    score.__name__ = f"score_{metric}"
    return score


async def score_coherence(data: ScoringInput, options: ThresholdOptions, judge: Judge) -> MetricOutcome:
    if not data.actual:
        return MetricOutcome.not_evaluated("no actual invocations")
    if reason := missing_project(COHERENCE):
        return MetricOutcome.not_evaluated(reason, len(data.actual), Cause.NO_CREDENTIALS)
    try:
        template = await llm_metric_template(COHERENCE_METRIC, COHERENCE_METRIC_VERSION, judge.llm.cache)
    except LlmUnavailable as exc:
        raise LlmUnavailable(
            f"the definition of the SDK's COHERENCE metric could not be fetched: {exc}",
            transient=exc.transient,
        ) from None
    return await score_single_turns(
        data,
        options.threshold,
        judge,
        name=COHERENCE,
        version=COHERENCE_VERSION,
        credentials=lambda: missing_project(COHERENCE),
        spec=llm_metric_spec(template),
    )
