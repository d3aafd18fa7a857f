"""The Vertex AI evaluation service (`evaluateInstances`) as ADK 2.13 reaches it through the Vertex AI SDK.

* Credentials, as ADK decides them: `GOOGLE_API_KEY` → Vertex AI express mode; else `GOOGLE_CLOUD_PROJECT` and
  `GOOGLE_CLOUD_LOCATION` (with Application Default Credentials). `GOOGLE_VERTEX_BASE_URL` overrides the endpoint.
* One request names one predefined metric (`predefined_metric_spec`), as the SDK's `PredefinedMetricHandler` does.
* A metric result the service marks with an error code has no score, whatever score it also carries: the SDK
  turns it into an `error_message` and its aggregation skips it, so ADK never sees that score.
"""

from __future__ import annotations

import json
import math
import os
from typing import Any

SERVICE = "vertex-ai-evaluation"  # priced per request by Google, not per token: no price-table entry


def missing_project(metric: str, env: dict[str, str] | None = None) -> str | None:
    """Why `metric` cannot reach the service with these settings (one line saying what to set), or None."""
    env = dict(os.environ if env is None else env)
    if env.get("GOOGLE_API_KEY"):
        return None
    project, location = env.get("GOOGLE_CLOUD_PROJECT"), env.get("GOOGLE_CLOUD_LOCATION")
    if project and location:
        return None
    missing = (
        "GOOGLE_CLOUD_LOCATION"
        if project
        else "GOOGLE_CLOUD_PROJECT"
        if location
        else "a Google Cloud project"
    )
    return (
        f"{metric} runs on the Vertex AI evaluation service and needs {missing}: set GOOGLE_CLOUD_PROJECT and "
        "GOOGLE_CLOUD_LOCATION (with Application Default Credentials), or GOOGLE_API_KEY for Vertex AI express mode"
    )


class VertexEvaluation:
    """google-genai's API client in Vertex AI mode: it already knows API keys, ADC, projects and endpoints. Built on
    the first request, so a case answered from the cache costs no client."""

    def __init__(self, timeout: float) -> None:
        self._timeout = timeout
        self._api: Any = None

    def _connect(self) -> None:
        from google import genai
        from google.genai import types

        options = types.HttpOptions(api_version="v1beta1", timeout=int(self._timeout * 1000))
        if base := os.environ.get("GOOGLE_VERTEX_BASE_URL"):
            options.base_url = base
        if key := os.environ.get("GOOGLE_API_KEY"):
            client = genai.Client(vertexai=True, api_key=key, http_options=options)
        else:
            client = genai.Client(
                vertexai=True,
                project=os.environ["GOOGLE_CLOUD_PROJECT"],
                location=os.environ["GOOGLE_CLOUD_LOCATION"],
                http_options=options,
            )
        self._client = client  # held: a collected genai.Client closes its transport
        # The evaluation service has no method in google-genai; the Vertex AI SDK itself posts through this client.
        self._api = client._api_client

    async def evaluate(self, metric: str, instance: dict[str, Any]) -> dict[str, Any]:
        """The service's first metric result, as a cacheable answer: score, explanation, error, rubric verdicts."""
        if self._api is None:
            self._connect()
        body = {"metrics": [{"predefined_metric_spec": {"metric_spec_name": metric}}], "instance": instance}
        response = await self._api.async_request("post", ":evaluateInstances", body, None)
        data = json.loads(response.body) if response.body else {}
        results = data.get("metricResults") or data.get("metric_results") or []
        first = results[0] if results else {}
        error = first.get("error") or {}
        verdicts = first.get("rubricVerdicts") or first.get("rubric_verdicts") or []
        return {
            "score": first.get("score"),
            "explanation": first.get("explanation"),
            "error": error.get("message") or f"error code {error['code']}"
            if isinstance(error, dict) and error.get("code")
            else None,
            "verdicts": [_verdict(v) for v in verdicts if isinstance(v, dict)],
            **({} if results else {"error": "the service returned no metric result"}),
        }


def _verdict(raw: dict[str, Any]) -> dict[str, Any]:
    rubric = raw.get("evaluatedRubric") or raw.get("evaluated_rubric") or {}
    prop = (rubric.get("content") or {}).get("property") or {}
    return {
        "rubric": prop.get("description") or rubric.get("rubricId") or rubric.get("rubric_id"),
        "met": bool(raw.get("verdict")),
        "reasoning": raw.get("reasoning"),
    }


def answer_score(answer: dict[str, Any]) -> float | None:
    """The score ADK would see: none when the result carries an error, is missing, is not a number or is NaN."""
    score = answer.get("score")
    if (
        answer.get("error")
        or not isinstance(score, (int, float))
        or isinstance(score, bool)
        or math.isnan(score)
    ):
        return None
    return float(score)


def answer_detail(answer: dict[str, Any]) -> str | None:
    """The service's error, else its explanation, followed by the rubric verdicts (adaptive-rubric metrics)."""
    parts = [answer.get("error") or answer.get("explanation")]
    verdicts = answer.get("verdicts") or []
    if verdicts:
        met = sum(1 for v in verdicts if v["met"])
        listed = "; ".join(
            f"{'met' if v['met'] else 'NOT met'}: {v['rubric'] or '(unnamed rubric)'}" for v in verdicts
        )
        parts.append(f"{met} of {len(verdicts)} rubrics met ({listed})")
    text = " — ".join(p for p in parts if p)
    return text or None
