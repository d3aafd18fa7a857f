"""`response_match_score`: ROUGE-1 F-measure of the final response against the reference, averaged.

The maths is rouge-score's `RougeScorer(["rouge1"])` with ADK's tokenizer, done here on the same integer counts
(rouge-score's scorer module imports all of nltk, over a second, for other ROUGE types); texts are the final
response's text parts joined by newlines. Both texts empty scores 0.0, as in ADK.
"""

from __future__ import annotations

from collections import Counter

from adk_eval_gate.criteria.engine.criterion import (
    InvocationScore,
    MetricOutcome,
    NotEvaluable,
    ScoringInput,
    running_mean,
    status_for,
)
from adk_eval_gate.criteria.engine.options import ThresholdOptions
from adk_eval_gate.evalsets.adk_eval_schema import content_text


def rouge1_f(response: str, reference: str) -> float:
    """rouge-score's `_score_ngrams` for unigrams, then its `fmeasure`, operation for operation."""
    from adk_eval_gate.criteria.engine.rouge_tokenizer import tokenize_text

    target, prediction = Counter(tokenize_text(reference)), Counter(tokenize_text(response))
    overlap = 0
    for token, count in target.items():
        overlap += min(count, prediction[token])
    precision = overlap / max(sum(prediction.values()), 1)
    recall = overlap / max(sum(target.values()), 1)
    return 2 * precision * recall / (precision + recall) if precision + recall > 0 else 0.0


def score_response_match(data: ScoringInput, options: ThresholdOptions) -> MetricOutcome:
    if data.expected is None:
        raise NotEvaluable("needs expected invocations (a reference conversation)")
    if not data.actual:
        return MetricOutcome.not_evaluated("no actual invocations")
    per_invocation, scores = [], []
    for actual, expected in zip(data.actual, data.expected, strict=True):
        score = rouge1_f(content_text(actual.final_response), content_text(expected.final_response))
        scores.append(score)
        per_invocation.append(InvocationScore(score, status_for(score, options.threshold)))
    overall = running_mean(scores)
    return MetricOutcome(overall, status_for(overall, options.threshold), per_invocation)
