"""agents-cli's prompt-template and predefined metrics on the Agent Platform evaluation service, sent as
agents-cli 1.11 sends them through the SDK (google-cloud-aiplatform 2.7):

* A bare name of `metrics_to_run` is the SDK's `RubricMetric.<NAME>`: a pinned version (`general_quality` →
  `general_quality_v1`) that the service knows (`predefined_metric_spec`), or else an LLM metric whose definition
  the SDK downloads from its Cloud Storage bucket (`coherence`, `fluency`, …: vertex_service.llm_metric_template).
* A `custom_metrics` entry without a body takes the newest registered version (agents-cli's own resolution) with
  its `metric_spec_parameters`, and its judge settings as the request's `autoraterConfig`.
* A `prompt_template` entry is an LLM metric (`llm_based_metric_spec`, vertex_service.llm_metric_spec); code with
  `execution: remote` (or `remote_custom_function`) runs in the service's sandbox (`custom_code_execution_spec`).
* The instance is the SDK's `_build_evaluation_instance` on the generated case: prompt, response, reference,
  `rubricGroups`, the case's `agent_data` as `agent_eval_data`, `context` and the template's other variables in
  `otherData`; a `multi_turn_*` predefined metric gets the conversation history plus the prompt as its prompt.

Requests go through the judge pool: cache, retries, spending limit, and the credentials check of the other Vertex
metrics (no project or key: not evaluated, as on a fork). tests/unit/criteria/test_agents_cli_service.py holds
every request equal to the SDK's own for the same case and metric.
"""

from __future__ import annotations

import json
import re
from typing import Any

from google.genai import types as genai_types

from adk_eval_gate.core.json_types import JsonObject
from adk_eval_gate.criteria.engine.criterion import (
    Cause,
    InvocationScore,
    JudgeScorer,
    MetricOutcome,
    ScoringInput,
    Status,
    UnparseableReply,
)
from adk_eval_gate.criteria.engine.judge import Judge
from adk_eval_gate.criteria.engine.options import AgentsCliOptions
from adk_eval_gate.criteria.engine.vertex_service import (
    SERVICE,
    VertexEvaluation,
    answer_detail,
    answer_score,
    llm_metric_spec,
    llm_metric_template,
    missing_project,
)
from adk_eval_gate.evalsets.agents_cli_config import (
    ALIASES,
    PREDEFINED_METRICS,
    RUBRIC_VERSIONS,
    AgentsCliMetric,
    resolve_predefined,
)
from adk_eval_gate.evalsets.agents_cli_models import AgentsCliCase, Message, ResponseCandidate
from adk_eval_gate.evalsets.agents_cli_traces import generated_case
from adk_eval_gate.llm.cache import cache_key
from adk_eval_gate.llm.client import LlmUnavailable

_VARIABLE = re.compile(r"\{([_a-zA-Z][_a-zA-Z0-9]*)\}")  # the SDK's PromptTemplate variables
_STANDARD = {"prompt", "response", "reference", "context", "agent_data"}
_AUTORATER = (
    ("judge_model", "autorater_model"),
    ("judge_model_generation_config", "generation_config"),
    ("judge_model_sampling_count", "sampling_count"),
)


def bare_name(name: str) -> tuple[str, str]:
    """A bare metric name → ("predefined", spec name) or ("definition", (metric, version) as "metric@version")."""
    lowered = name.lower()
    base = ALIASES.get(lowered, lowered)
    if base in RUBRIC_VERSIONS:
        versioned = f"{base}_{RUBRIC_VERSIONS[base]}"
        return ("predefined", versioned) if versioned in PREDEFINED_METRICS else ("definition", f"{base}@v1")
    return ("predefined", lowered)  # a versioned name, as written (the config accepted only registered ones)


def _instance_data(content: object) -> JsonObject | None:
    return None if content is None else {"contents": {"contents": [_dump(content)]}}


def _dump(value: object) -> Any:
    return value.model_dump(mode="json", exclude_none=True) if hasattr(value, "model_dump") else value


def _contents(value: object) -> list[JsonObject]:
    """The SDK's `_value_to_content_list` for a template variable's value."""
    from google.genai import types as genai_types

    if isinstance(value, genai_types.Content):
        return [_dump(value)]
    if isinstance(value, ResponseCandidate):
        return [_dump(value.response)] if value.response else []
    if isinstance(value, list) and value:
        if isinstance(value[0], genai_types.Content):
            return [_dump(v) for v in value]
        if isinstance(value[0], Message):
            lines = []
            for message in value:
                texts = "".join(p.text for p in (message.content.parts or []) if p.text) if message.content else ""
                if texts:
                    lines.append(f"{message.content.role or message.author or 'user'}: {texts}")
            return [{"parts": [{"text": "\n".join(lines)}]}]
        return [{"parts": [{"text": json.dumps([_dump(v) for v in value])}]}]
    if isinstance(value, dict):
        return [{"parts": [{"text": json.dumps(value)}]}]
    return [{"parts": [{"text": str(value)}]}]


def evaluation_instance(generated: JsonObject, *, template: str | None, multi_turn: bool) -> JsonObject:
    """The request's `instance` for one generated case (its first response), as the SDK builds and sends it."""
    case = AgentsCliCase.model_validate(generated)
    # the SDK sends a scenario's starting prompt as plain Content JSON, not a validated Content
    prompt: genai_types.Content | JsonObject | None = case.prompt
    if prompt is None and case.user_scenario is not None and case.user_scenario.starting_prompt:
        prompt = {"parts": [{"text": case.user_scenario.starting_prompt}]}
    response = case.responses[0].response if case.responses else None
    instance: JsonObject = {}
    if multi_turn:
        history = [_dump(m.content) for m in case.conversation_history or []]
        instance["prompt"] = {"contents": {"contents": history + ([_dump(prompt)] if prompt is not None else [])}}
    elif prompt is not None:
        instance["prompt"] = _instance_data(prompt)
    if response is not None:
        instance["response"] = _instance_data(response)
    if case.reference is not None and case.reference.response is not None:
        instance["reference"] = _instance_data(case.reference.response)
    other: JsonObject = {}
    context = (case.model_extra or {}).get("context")  # an extra field: raw JSON, never validated into a Content
    if context:
        other["context"] = (
            {"text": context} if isinstance(context, str) else {"contents": {"contents": _contents(context)}}
        )
    for variable in sorted(set(_VARIABLE.findall(template or ""))):
        root = variable.split(".")[0].split("[")[0]
        if root not in _STANDARD and hasattr(case, root):
            other[root] = {"contents": {"contents": _contents(getattr(case, root))}}
    if other:
        instance["otherData"] = {"map_instance": other}
    if case.agent_data is not None:
        instance["agent_eval_data"] = _dump(case.agent_data)
    if case.rubric_groups is not None:
        instance["rubricGroups"] = {k: _dump(v) for k, v in case.rubric_groups.items()}
    return instance


def code_instance(generated: JsonObject) -> JsonObject:
    """The instance of a remote code metric (the SDK's CustomCodeExecutionMetricHandler): no rubrics, no other data."""
    case = AgentsCliCase.model_validate(generated)
    # the SDK sends a scenario's starting prompt as plain Content JSON, not a validated Content
    prompt: genai_types.Content | JsonObject | None = case.prompt
    if prompt is None and case.user_scenario is not None and case.user_scenario.starting_prompt:
        prompt = {"parts": [{"text": case.user_scenario.starting_prompt}]}
    instance: JsonObject = {}
    for key, content in (
        ("prompt", prompt),
        ("response", case.responses[0].response if case.responses else None),
        ("reference", case.reference.response if case.reference else None),
    ):
        if content is not None:
            instance[key] = _instance_data(content)
    if case.agent_data is not None:
        instance["agent_eval_data"] = _dump(case.agent_data)
    return instance


def _autorater(entry: JsonObject) -> JsonObject:
    return {wire: entry[field] for field, wire in _AUTORATER if entry.get(field)}


def _without_run_ids(value: object) -> Any:
    """The cache key leaves out the ids a live run draws at random, so an unchanged case costs no second request."""
    if isinstance(value, dict):
        return {k: _without_run_ids(v) for k, v in value.items() if k != "id"}
    if isinstance(value, list):
        return [_without_run_ids(v) for v in value]
    return value


async def _request(metric: AgentsCliMetric, judge: Judge) -> tuple[JsonObject, JsonObject, str | None, bool]:
    """(metric spec, extra request fields, prompt template, multi-turn) for one metric."""
    entry = metric.entry or {}
    if metric.kind == "remote_code":  # run in the service's sandbox: the source is the metric
        return {"custom_code_execution_spec": {"evaluation_function": metric.source}}, {}, None, False
    if metric.kind == "prompt_template":
        return llm_metric_spec(entry), {}, entry["prompt_template"], False
    if metric.entry is not None:  # a body-less custom_metrics entry: the newest version, parameterised
        name = resolve_predefined(metric.name) or metric.name.lower()
        spec = {"metric_spec_name": name, "metric_spec_parameters": entry.get("metric_spec_parameters")}
        extra = {"autoraterConfig": auto} if (auto := _autorater(entry)) else {}
        return {"predefined_metric_spec": spec}, extra, None, name.startswith("multi_turn")
    kind, resolved = bare_name(metric.name)
    if kind == "predefined":
        spec = {"metric_spec_name": resolved, "metric_spec_parameters": None}
        return {"predefined_metric_spec": spec}, {}, None, resolved.startswith("multi_turn")
    name, version = resolved.split("@")
    template = await llm_metric_template(name, version, judge.llm.cache)
    return llm_metric_spec(template), {}, template["prompt_template"], False


def service_scorer(metric: AgentsCliMetric) -> JudgeScorer[AgentsCliOptions]:
    async def score(data: ScoringInput, options: AgentsCliOptions, judge: Judge) -> MetricOutcome:
        count = len(data.actual)
        if reason := missing_project(metric.name):
            return MetricOutcome.not_evaluated(reason, count, Cause.NO_CREDENTIALS)
        spec, extra, template, multi_turn = await _request(metric, judge)
        generated = generated_case(data.case, data.actual)
        if not generated.get("responses") and (template is not None or spec.get("llm_based_metric_spec")):
            return MetricOutcome.error(
                f"{metric.name}: Response content missing for candidate 0.", Cause.INTERNAL_ERROR, count
            )
        if "custom_code_execution_spec" in spec:
            instance = code_instance(generated)
        else:
            instance = evaluation_instance(generated, template=template, multi_turn=multi_turn)
        vertex = VertexEvaluation(judge.llm.settings.timeout)
        key = cache_key(purpose="agents-cli", metric=spec, extra=extra, instance=_without_run_ids(instance))
        answer = await judge.llm.cached_call(
            metric.name,
            SERVICE,
            key,
            lambda: vertex.evaluate(metric.name, instance, spec, extra),
            credentials=lambda: missing_project(metric.name),
        )
        value, detail = answer_score(answer), answer_detail(answer)
        if value is None:
            if answer.get("error"):
                raise LlmUnavailable(f"the evaluation service returned no score: {detail}")
            raise UnparseableReply(f"the evaluation service returned no score{f': {detail}' if detail else ''}")
        passed = not options.has_threshold or value >= options.threshold
        status = Status.PASSED if passed else Status.FAILED
        return MetricOutcome(value, status, [InvocationScore(value, status, detail)] * count)

    return score
