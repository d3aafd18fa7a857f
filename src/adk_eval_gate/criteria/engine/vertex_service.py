"""The Vertex AI evaluation service (`evaluateInstances`) as ADK 2.13 reaches it through the Vertex AI SDK.

* Credentials, as ADK decides them: `GOOGLE_API_KEY` → Vertex AI express mode; else `GOOGLE_CLOUD_PROJECT` and
  `GOOGLE_CLOUD_LOCATION` (with Application Default Credentials). `GOOGLE_VERTEX_BASE_URL` overrides the endpoint.
* One request names one predefined metric (`predefined_metric_spec`), as the SDK's `PredefinedMetricHandler` does.
* A metric result the service marks with an error code has no score, whatever score it also carries: the SDK
  turns it into an `error_message` and its aggregation skips it, so ADK never sees that score.
* An SDK metric that is not predefined (COHERENCE) is an LLM metric whose definition the SDK downloads from the
  SDK's public Cloud Storage bucket at run time: fetched the same way here (`<version>.yaml`, else
  `<version>.json`), kept in the judge cache so that a re-run downloads nothing, and sent as an
  `llm_based_metric_spec` built as the SDK's `t_metrics` builds it.
"""

from __future__ import annotations

import asyncio
import json
import math
import os
import weakref
from typing import Any
from urllib.parse import quote

import yaml

from adk_eval_gate.core.clip import clip
from adk_eval_gate.core.json_types import JsonObject
from adk_eval_gate.llm.cache import LlmCache, cache_key
from adk_eval_gate.llm.client import LlmUnavailable

SERVICE = "vertex-ai-evaluation"  # priced per request by Google, not per token: no price-table entry


def missing_project(metric: str, env: dict[str, str] | None = None) -> str | None:
    """Why `metric` cannot reach the service with these settings (one line saying what to set), or None."""
    env = dict(os.environ if env is None else env)
    if env.get("GOOGLE_API_KEY"):
        return None
    project, location = env.get("GOOGLE_CLOUD_PROJECT"), env.get("GOOGLE_CLOUD_LOCATION")
    if project and location:
        return None
    missing = "GOOGLE_CLOUD_LOCATION" if project else "GOOGLE_CLOUD_PROJECT" if location else "a Google Cloud project"
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

    async def post(self, body: JsonObject) -> JsonObject:
        """One `evaluateInstances` request as it is given; the reply's JSON."""
        if self._api is None:
            self._connect()
        response = await self._api.async_request("post", ":evaluateInstances", body, None)
        return json.loads(response.body) if response.body else {}

    async def evaluate(
        self,
        metric: str,
        instance: JsonObject,
        spec: JsonObject | None = None,
        extra: JsonObject | None = None,
    ) -> JsonObject:
        """The service's first metric result, as a cacheable answer: score, explanation, error, rubric verdicts.
        `spec` is the metric as sent (an LLM metric's); without it the predefined metric named `metric`. `extra`:
        more request fields (an `autoraterConfig`)."""
        body = {
            **(extra or {}),
            "metrics": [spec or {"predefined_metric_spec": {"metric_spec_name": metric}}],
            "instance": instance,
        }
        data = await self.post(body)
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


def _verdict(raw: JsonObject) -> JsonObject:
    rubric = raw.get("evaluatedRubric") or raw.get("evaluated_rubric") or {}
    prop = (rubric.get("content") or {}).get("property") or {}
    return {
        "rubric": prop.get("description") or rubric.get("rubricId") or rubric.get("rubric_id"),
        "met": bool(raw.get("verdict")),
        "reasoning": raw.get("reasoning"),
    }


def answer_score(answer: JsonObject) -> float | None:
    """The score ADK would see: none when the result carries an error, is missing, is not a number or is NaN."""
    score = answer.get("score")
    if answer.get("error") or not isinstance(score, (int, float)) or isinstance(score, bool) or math.isnan(score):
        return None
    return float(score)


def answer_detail(answer: JsonObject) -> str | None:
    """The service's error, else its explanation, followed by the rubric verdicts (adaptive-rubric metrics)."""
    parts = [answer.get("error") or answer.get("explanation")]
    verdicts = answer.get("verdicts") or []
    if verdicts:
        met = sum(1 for v in verdicts if v["met"])
        listed = "; ".join(f"{'met' if v['met'] else 'NOT met'}: {v['rubric'] or '(unnamed rubric)'}" for v in verdicts)
        parts.append(f"{met} of {len(verdicts)} rubrics met ({listed})")
    text = " — ".join(p for p in parts if p)
    return text or None


SDK_RESOURCES = "vertex-ai-generative-ai-eval-sdk-resources"
_STORAGE = "https://storage.googleapis.com"
# One download per template and event loop even when every invocation of a run asks for it at once.
_fetches: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[str, asyncio.Task[JsonObject]]] = (
    weakref.WeakKeyDictionary()
)


def template_dir(metric: str) -> str:
    return f"gs://{SDK_RESOURCES}/metrics/{metric.lower()}/"


async def llm_metric_template(metric: str, version: str, cache: LlmCache) -> JsonObject:
    """The SDK's definition of LLM metric `metric` at `version` (the parsed file, plus `source`: its gs:// URI).
    Raises LlmUnavailable with the reason when it cannot be fetched or is not a metric definition."""
    key = cache_key(purpose="vertex-llm-metric-template", metric=metric.lower(), version=version)
    if (cached := cache.get(key)) is not None:
        return cached
    loop = asyncio.get_running_loop()
    running = _fetches.setdefault(loop, {})
    if key not in running:
        running[key] = loop.create_task(asyncio.to_thread(_download_template, metric, version))
    try:
        template = await asyncio.shield(running[key])
    finally:
        if running.get(key) is not None and running[key].done():
            running.pop(key, None)
    cache.put(key, template)
    return template


def _download_template(metric: str, version: str) -> JsonObject:
    import requests
    from google.auth.exceptions import GoogleAuthError

    session = _storage_session()
    tried = []
    for extension in ("yaml", "json"):  # the SDK's order for an explicit version
        uri = f"{template_dir(metric)}{version}.{extension}"
        bucket, blob = uri.removeprefix("gs://").split("/", 1)
        url = f"{_storage_host()}/download/storage/v1/b/{bucket}/o/{quote(blob, safe='')}?alt=media"
        try:
            response = session.get(url, timeout=60)
        except requests.RequestException as exc:
            raise LlmUnavailable(f"could not download {uri}: {exc}", transient=True) from None
        except GoogleAuthError as exc:  # e.g. Application Default Credentials that cannot be refreshed
            raise LlmUnavailable(f"could not download {uri}: credentials: {exc}") from None
        if response.status_code == 404:
            tried.append(uri)
            continue
        if response.status_code != 200:
            raise LlmUnavailable(
                f"could not download {uri}: HTTP {response.status_code} {clip(response.text, 200)}",
                transient=response.status_code >= 500 or response.status_code == 429,
            )
        return _parse_template(uri, response.content.decode("utf-8", errors="replace"), extension)
    raise LlmUnavailable(f"the metric definition is not in Cloud Storage: {' nor '.join(tried)} (HTTP 404)")


def _storage_host() -> str:
    # The variable google-cloud-storage (the SDK's client) honours for an emulator or a proxy.
    host = os.environ.get("STORAGE_EMULATOR_HOST")
    if not host:
        return _STORAGE
    return (host if "://" in host else f"http://{host}").rstrip("/")


def _storage_session() -> Any:
    """Application Default Credentials, as the SDK's storage client uses; anonymous when there are none (the
    bucket is public) or for an emulator (google-cloud-storage sends no credentials to one either)."""
    import requests

    if os.environ.get("STORAGE_EMULATOR_HOST"):
        return requests.Session()
    import google.auth
    from google.auth.exceptions import DefaultCredentialsError
    from google.auth.transport.requests import AuthorizedSession

    try:
        credentials, _ = google.auth.default(scopes=["https://www.googleapis.com/auth/devstorage.read_only"])
    except DefaultCredentialsError:
        return requests.Session()
    session: requests.Session = AuthorizedSession(credentials)  # type: ignore[no-untyped-call]  # google-auth: untyped
    return session


def _parse_template(uri: str, text: str, extension: str) -> JsonObject:
    try:
        data = yaml.safe_load(text) if extension == "yaml" else json.loads(text)
    except (yaml.YAMLError, ValueError) as exc:
        raise LlmUnavailable(f"{uri} is not valid {extension.upper()}: {exc}") from None
    # The checks the SDK's LLMMetric model makes before it sends anything.
    if not isinstance(data, dict):
        raise LlmUnavailable(f"{uri} is not an LLM metric definition (not a mapping)")
    template, name, count = (
        data.get("prompt_template"),
        data.get("name"),
        data.get("judge_model_sampling_count"),
    )
    if not isinstance(template, str) or not template.strip():
        raise LlmUnavailable(f"{uri} is not an LLM metric definition: its prompt_template is missing or empty")
    if not name:
        raise LlmUnavailable(f"{uri} is not an LLM metric definition: its name is missing or empty")
    if count is not None and (not isinstance(count, int) or not 1 <= count <= 32):
        raise LlmUnavailable(f"{uri}: judge_model_sampling_count must be between 1 and 32, not {count!r}")
    return {**data, "source": uri}


def llm_metric_spec(template: JsonObject) -> JsonObject:
    """The metric as the SDK's `t_metrics` sends an LLM metric: only the settings the definition gives."""
    spec: JsonObject = {"metric_prompt_template": template["prompt_template"]}
    if system := template.get("judge_model_system_instruction"):
        spec["system_instruction"] = system
    if group := template.get("rubric_group_name"):
        spec["rubric_group_key"] = group
    if raw := template.get("return_raw_output"):
        spec["custom_output_format_config"] = {"return_raw_output": raw}
    autorater = {
        wire: template[field]
        for field, wire in (
            ("judge_model", "autorater_model"),
            ("judge_model_generation_config", "generation_config"),
            ("judge_model_sampling_count", "sampling_count"),
        )
        if template.get(field)
    }
    if autorater:
        spec["judge_autorater_config"] = autorater
    if parser := template.get("result_parsing_function"):
        spec["result_parser_config"] = {"custom_code_parser_config": {"parsing_function": parser}}
    return {"llm_based_metric_spec": spec}
