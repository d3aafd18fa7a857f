"""`safety_v1`: the Vertex AI evaluation service's predefined `safety_v1` metric, called as ADK 2.13 calls it.

* Credentials and endpoint: vertex_service.py (ADK's rules); without them the criterion is not evaluated with a
  one-line reason saying what to set.
* One `evaluateInstances` request per invocation with the user's text as the prompt, the final response as the
  response and the reference's final response (when there is one), shaped as the Vertex AI SDK shapes them; an
  invocation without text on either side is an error (the SDK refuses it). Its score (1 safe, 0 unsafe) is the
  invocation's score, a missing, NaN or errored score none. The case score is the mean of the scored invocations;
  with none scored the criterion is an error (the service's own error when it gave one), never a quiet
  not-evaluated.
* Requests share the run's pool, budget, retries and cache with the judges.
"""

from __future__ import annotations

from collections.abc import Callable

from adk_eval_gate.core.json_types import JsonObject
from adk_eval_gate.criteria.engine import vertex_service
from adk_eval_gate.criteria.engine.criterion import (
    Cause,
    InvocationScore,
    MetricOutcome,
    ScoringInput,
    UnparseableReply,
    running_mean,
    status_for,
)
from adk_eval_gate.criteria.engine.judge import Judge, gather_all
from adk_eval_gate.criteria.engine.options import ThresholdOptions
from adk_eval_gate.criteria.engine.vertex_service import (
    SERVICE,
    VertexEvaluation,
    answer_detail,
    answer_score,
)
from adk_eval_gate.evalsets.adk_eval_schema import Invocation, content_text
from adk_eval_gate.llm.cache import cache_key
from adk_eval_gate.llm.client import LlmUnavailable

NAME = "safety_v1"
VERSION = "2"  # 2: the instance as the Vertex AI SDK sends it (contents and agent_eval_data)


def missing_project(env: dict[str, str] | None = None) -> str | None:
    return vertex_service.missing_project(NAME, env)


def _contents(text: str) -> JsonObject:
    return {"contents": {"contents": [{"parts": [{"text": text}]}]}}


def instance_for(actual: Invocation, expected: Invocation | None) -> JsonObject:
    """The instance the Vertex AI SDK builds from ADK's one-row dataset: prompt, response and (when not empty)
    reference as contents, and the same exchange again as a one-turn `agent_eval_data`."""
    prompt, response = content_text(actual.user_content), content_text(actual.final_response)
    if not prompt or not response:
        missing = "user message" if not prompt else "final response"
        # The SDK refuses such a row before any request, so ADK gets no score either; here that is an error.
        raise ValueError(f"the invocation's {missing} has no text, and the Vertex AI SDK requires one")
    instance = {"prompt": _contents(prompt), "response": _contents(response)}
    if expected is not None and (reference := content_text(expected.final_response)):
        instance["reference"] = _contents(reference)
    events = [
        {"author": "user", "content": {"parts": [{"text": prompt}]}},
        {"author": "model", "content": {"parts": [{"text": response}]}},
    ]
    instance["agent_eval_data"] = {"turns": [{"turn_index": 0, "turn_id": "turn_0", "events": events}]}
    return instance


async def score_safety(data: ScoringInput, options: ThresholdOptions, judge: Judge) -> MetricOutcome:
    if not data.actual:
        return MetricOutcome.not_evaluated("no actual invocations")
    if reason := missing_project():
        return MetricOutcome.not_evaluated(reason, len(data.actual), Cause.NO_CREDENTIALS)
    return await score_single_turns(
        data, options.threshold, judge, name=NAME, version=VERSION, credentials=missing_project
    )


async def score_single_turns(
    data: ScoringInput,
    threshold: float,
    judge: Judge,
    *,
    name: str,
    version: str,
    credentials: Callable[[], str | None],
    spec: JsonObject | None = None,
) -> MetricOutcome:
    """One evaluation-service request per invocation (safety_v1, coherence), the case score the mean of the
    scored ones, as the SDK and ADK compute them; no score at all is an error, never a quiet pass."""
    vertex = VertexEvaluation(judge.llm.settings.timeout)
    expected = list(data.expected) if data.expected is not None else [None] * len(data.actual)
    metric = {"metric": spec} if spec is not None else {}  # safety's cache keys stay as they were

    async def one(actual: Invocation, reference: Invocation | None) -> InvocationScore:
        instance = instance_for(actual, reference)
        key = cache_key(purpose=name, version=version, **metric, instance=instance)
        answer = await judge.llm.cached_call(
            name,
            SERVICE,
            key,
            lambda: vertex.evaluate(name, instance, spec),
            credentials=credentials,
        )
        score = answer_score(answer)
        return InvocationScore(score, status_for(score, threshold), answer_detail(answer))

    per_invocation = await gather_all(*(one(a, e) for a, e in zip(data.actual, expected, strict=True)))
    scores = [p.score for p in per_invocation if p.score is not None]
    if not scores:
        reasons = "; ".join(sorted({p.detail for p in per_invocation if p.detail}))
        if reasons:
            raise LlmUnavailable(f"the evaluation service returned no score: {reasons}")
        raise UnparseableReply("the evaluation service returned no score")
    overall = running_mean(scores)  # ADK accumulates left to right over the scored invocations
    return MetricOutcome(overall, status_for(overall, threshold), per_invocation)
