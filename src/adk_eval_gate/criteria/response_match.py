"""`response_match_score`: ROUGE-1 F-measure of the final response against the reference, averaged.

The maths is rouge-score's own (`RougeScorer(["rouge1"])` with ADK's tokenizer); texts are the final
response's text parts joined by newlines. Both texts empty scores 0.0, as in ADK.
"""

from __future__ import annotations

from functools import cache

from adk_eval_gate.criteria.engine.base import (
    InvocationScore,
    MetricOutcome,
    NotEvaluable,
    ScoringInput,
    running_mean,
    status_for,
)
from adk_eval_gate.criteria.engine.options import ThresholdOptions
from adk_eval_gate.evalsets.models import content_text


@cache
def _scorer():
    # rouge-score pulls in nltk (over a second): built on first use, so rejecting bad input stays fast.
    from rouge_score import rouge_scorer

    from adk_eval_gate.criteria.engine.rouge_tokenizer import UnicodeAwareTokenizer

    return rouge_scorer.RougeScorer(["rouge1"], tokenizer=UnicodeAwareTokenizer())


def rouge1_f(response: str, reference: str) -> float:
    return _scorer().score(reference, response)["rouge1"].fmeasure


def score_response_match(data: ScoringInput, options: ThresholdOptions) -> MetricOutcome:
    if data.expected is None:
        raise NotEvaluable("needs expected invocations (a reference conversation)")
    if not data.actual:
        return MetricOutcome.not_evaluated("no actual invocations")
    per_invocation = []
    for actual, expected in zip(data.actual, data.expected, strict=True):
        score = rouge1_f(content_text(actual.final_response), content_text(expected.final_response))
        per_invocation.append(InvocationScore(score, status_for(score, options.threshold)))
    overall = running_mean([item.score for item in per_invocation])
    return MetricOutcome(overall, status_for(overall, options.threshold), per_invocation)
