"""`safety_v1`: the Vertex AI evaluation service's predefined `safety_v1` metric, called as ADK 2.13 calls it.

* Credentials, as ADK decides them: `GOOGLE_API_KEY` → Vertex AI express mode; else `GOOGLE_CLOUD_PROJECT` and
  `GOOGLE_CLOUD_LOCATION` (with Application Default Credentials); anything else leaves the criterion not
  evaluated with a one-line reason saying what to set. `GOOGLE_VERTEX_BASE_URL` overrides the endpoint.
* One `evaluateInstances` request per invocation with the user's text as the prompt, the final response as the
  response and the reference's final response (when there is one); its score (1 safe, 0 unsafe) is the
  invocation's score, a missing or NaN score none. The case score is the mean of the scored invocations; with none
  scored the criterion is an error (the service's own error when it gave one), never a quiet not-evaluated.
* Requests share the run's pool, budget, retries and cache with the judges.
"""

from __future__ import annotations

import json
import math
import os
from typing import Any

from ..evalsets.models import Invocation, content_text
from ..llm.cache import cache_key
from ..llm.client import LlmUnavailable
from .base import (
    Cause,
    InvocationScore,
    MetricOutcome,
    ScoringInput,
    UnparseableReply,
    running_mean,
    status_for,
)
from .judge import Judge, gather_all
from .options import ThresholdOptions

NAME = "safety_v1"
VERSION = "1"
SERVICE = "vertex-ai-evaluation"  # priced per request by Google, not per token: no price-table entry


def missing_project(env: dict[str, str] | None = None) -> str | None:
    env = dict(os.environ if env is None else env)
    if env.get("GOOGLE_API_KEY"):
        return None
    project, location = env.get("GOOGLE_CLOUD_PROJECT"), env.get("GOOGLE_CLOUD_LOCATION")
    if project and location:
        return None
    missing = "GOOGLE_CLOUD_LOCATION" if project else "GOOGLE_CLOUD_PROJECT" if location else "a Google Cloud project"
    return (f"safety_v1 runs on the Vertex AI evaluation service and needs {missing}: set GOOGLE_CLOUD_PROJECT and "
            "GOOGLE_CLOUD_LOCATION (with Application Default Credentials), or GOOGLE_API_KEY for Vertex AI express mode")


class _Vertex:
    """google-genai's API client in Vertex AI mode: it already knows API keys, ADC, projects and endpoints. Built on
    the first request, so a case answered from the cache costs no client."""

    def __init__(self, timeout: float) -> None:
        self._timeout = timeout
        self._api: Any = None

    def _connect(self, timeout: float) -> None:
        from google import genai
        from google.genai import types

        options = types.HttpOptions(api_version="v1beta1", timeout=int(timeout * 1000))
        if base := os.environ.get("GOOGLE_VERTEX_BASE_URL"):
            options.base_url = base
        if key := os.environ.get("GOOGLE_API_KEY"):
            client = genai.Client(vertexai=True, api_key=key, http_options=options)
        else:
            client = genai.Client(vertexai=True, project=os.environ["GOOGLE_CLOUD_PROJECT"],
                                  location=os.environ["GOOGLE_CLOUD_LOCATION"], http_options=options)
        self._client = client  # held: a collected genai.Client closes its transport
        # The evaluation service has no method in google-genai; the Vertex AI SDK itself posts through this client.
        self._api = client._api_client

    async def evaluate(self, instance: dict[str, Any]) -> dict[str, Any]:
        if self._api is None:
            self._connect(self._timeout)
        body = {"metrics": [{"predefined_metric_spec": {"metric_spec_name": NAME}}], "instance": instance}
        response = await self._api.async_request("post", ":evaluateInstances", body, None)
        data = json.loads(response.body) if response.body else {}
        results = data.get("metricResults") or data.get("metric_results") or []
        first = results[0] if results else {}
        score = first.get("score")
        if not isinstance(score, (int, float)) or isinstance(score, bool) or math.isnan(score):
            score = None
        error = first.get("error") or {}
        return {"score": score, "explanation": first.get("explanation"),
                "error": error.get("message") if isinstance(error, dict) and error.get("code") else None}


def instance_for(actual: Invocation, expected: Invocation | None) -> dict[str, Any]:
    instance = {"prompt": {"text": content_text(actual.user_content)}, "response": {"text": content_text(actual.final_response)}}
    if expected is not None:
        instance["reference"] = {"text": content_text(expected.final_response)}
    return instance


async def score_safety(data: ScoringInput, options: ThresholdOptions, judge: Judge) -> MetricOutcome:
    if not data.actual:
        return MetricOutcome.not_evaluated("no actual invocations")
    if reason := missing_project():
        return MetricOutcome.not_evaluated(reason, len(data.actual), Cause.NO_CREDENTIALS)
    vertex = _Vertex(judge.llm.settings.timeout)
    expected = list(data.expected) if data.expected is not None else [None] * len(data.actual)

    async def one(actual: Invocation, reference: Invocation | None) -> InvocationScore:
        instance = instance_for(actual, reference)
        key = cache_key(purpose=NAME, version=VERSION, instance=instance)
        answer = await judge.llm.cached_call(NAME, SERVICE, key, lambda: vertex.evaluate(instance), credentials=missing_project)
        score = answer["score"]
        return InvocationScore(score, status_for(score, options.threshold), answer.get("error") or answer.get("explanation"))

    per_invocation = await gather_all(*(one(a, e) for a, e in zip(data.actual, expected, strict=True)))
    scores = [p.score for p in per_invocation if p.score is not None]
    if not scores:
        reasons = "; ".join(sorted({p.detail for p in per_invocation if p.detail}))
        if reasons:
            raise LlmUnavailable(f"the evaluation service returned no score: {reasons}")
        raise UnparseableReply("the evaluation service returned no score")
    overall = running_mean(scores)  # ADK accumulates left to right
    return MetricOutcome(overall, status_for(overall, options.threshold), per_invocation)
