"""agents-cli's computation metrics (`exact_match`, `bleu`, `rouge_1`, `rouge_l_sum`, declared under
`custom_metrics` without a body), computed by the evaluation service as the SDK's ComputationMetricHandler asks for
them: the final response's text as the prediction, the reference's as the reference, one instance per request;
the score is the first value of the reply's result list. No response text or no reference is an error for that
case, as in the SDK. tests/unit/criteria/test_agents_cli_service.py holds the requests equal to the SDK's.
"""

from __future__ import annotations

from typing import Any

from adk_eval_gate.core.json_types import JsonObject
from adk_eval_gate.criteria.engine.criterion import (
    Cause,
    InvocationScore,
    JudgeScorer,
    MetricOutcome,
    ScoringInput,
    Status,
)
from adk_eval_gate.criteria.engine.judge import Judge
from adk_eval_gate.criteria.engine.options import AgentsCliOptions
from adk_eval_gate.criteria.engine.vertex_service import SERVICE, VertexEvaluation, missing_project
from adk_eval_gate.evalsets.agents_cli_models import AgentsCliCase
from adk_eval_gate.evalsets.agents_cli_traces import generated_case
from adk_eval_gate.llm.cache import cache_key
from adk_eval_gate.llm.client import LlmUnavailable

INPUTS = {
    "exact_match": ("exactMatchInput", {}),
    "bleu": ("bleuInput", {}),
    "rouge_1": ("rougeInput", {"rouge_type": "rouge1"}),
    "rouge_l_sum": ("rougeInput", {"rouge_type": "rougeLsum"}),
}


def _text(content: Any) -> str | None:
    """The SDK's `_extract_text_from_content`: every non-thought text part, concatenated; None without any."""
    if content is None or not content.parts:
        return None
    texts = [p.text for p in content.parts if isinstance(p.text, str) and not p.thought]
    return "".join(texts) if texts else None


def computation_request(generated: JsonObject, name: str) -> JsonObject | str:
    """The request body, or why the SDK would refuse the case."""
    case = AgentsCliCase.model_validate(generated)
    case_id = case.eval_case_id or "Unknown ID"
    prediction = _text(case.responses[0].response) if case.responses else None
    if prediction is None:
        return f"Response text missing for candidate 0 in eval_case {case_id}."
    reference = _text(case.reference.response) if case.reference else None
    if reference is None:
        return f"Reference text missing for eval_case {case_id}."
    key, spec = INPUTS[name]
    return {key: {"instances": [{"prediction": prediction, "reference": reference}], "metric_spec": spec}}


def reply_score(reply: JsonObject) -> float | None:
    """The SDK's reading: the first result list in the reply, its first value's score."""
    for value in reply.values():
        if isinstance(value, dict):
            for inner in value.values():
                if isinstance(inner, list) and inner:
                    score = inner[0].get("score") if isinstance(inner[0], dict) else None
                    return float(score) if isinstance(score, (int, float)) and not isinstance(score, bool) else None
    return None


def computation_scorer(name: str) -> JudgeScorer[AgentsCliOptions]:
    async def score(data: ScoringInput, options: AgentsCliOptions, judge: Judge) -> MetricOutcome:
        count = len(data.actual)
        if reason := missing_project(name):
            return MetricOutcome.not_evaluated(reason, count, Cause.NO_CREDENTIALS)
        body = computation_request(generated_case(data.case, data.actual), name.lower())
        if isinstance(body, str):
            return MetricOutcome.error(f"{name}: {body}", Cause.NOT_APPLICABLE, count)
        vertex = VertexEvaluation(judge.llm.settings.timeout)

        async def call() -> JsonObject:
            return {"score": reply_score(await vertex.post(body))}

        answer = await judge.llm.cached_call(
            name, SERVICE, cache_key(purpose="agents-cli", body=body), call, credentials=lambda: missing_project(name)
        )
        value = answer.get("score")
        if value is None:
            raise LlmUnavailable(f"the evaluation service returned no {name} score")
        passed = not options.has_threshold or value >= options.threshold
        status = Status.PASSED if passed else Status.FAILED
        return MetricOutcome(value, status, [InvocationScore(value, status)] * count)

    return score
