"""`final_response_match_v2`: an LLM judge decides whether the final response is valid against the reference.

ADK 2.13's rules: `num_samples` samples per invocation; a sample's label is parsed with ADK's exact pattern
(case-sensitive; "valid"/"true" → 1, "invalid"/"almost"/"false"/"partially_valid" → 0, anything else → no
score); per invocation the majority wins and a tie counts as invalid; the case score is the share of valid invocations
among those evaluated. Where ADK would crash or report nothing, this gate fails closed: a sample that could not be
obtained fails the whole criterion (judging.py decides `error` or a designed `not_evaluated`), and so does a run
in which no reply could be parsed at all.
"""

from __future__ import annotations

import re

from adk_eval_gate.criteria.engine.criterion import (
    InvocationScore,
    MetricOutcome,
    NotEvaluable,
    ScoringInput,
    Status,
    UnparseableReply,
    running_mean,
    status_for,
)
from adk_eval_gate.criteria.engine.judge import Judge, gather_all
from adk_eval_gate.criteria.engine.options import LlmJudgeOptions
from adk_eval_gate.criteria.engine.prompts import response_text
from adk_eval_gate.criteria.judge_agreement import DeferredJudgement, disagree, known
from adk_eval_gate.evalsets.adk_eval_schema import Invocation, content_text

NAME = "final_response_match_v2"
VERSION = "1"  # bump when the template or parsing changes: it is part of every cache key
_VALID = re.compile(r'"is_the_agent_response_valid":\s*\[*[\n\s]*"*([^"^\]^\s]*)"*[\n\s]*\]*\s*[,\n\}]')
_INVALID = re.compile(r'"is_the_agent_response_invalid":\s*\[*[\n\s]*"*([^"^\]^\s]*)"*[\n\s]*\]*\s*[,\n\}]')


def parse_label(text: str | None) -> float | None:
    """1.0 valid, 0.0 invalid, None when no label could be read (ADK's `_parse_critique`)."""
    if not text:
        return None
    found = _VALID.search(text)
    if found:
        label = found.group(1).strip().rstrip(",}")
        if label in ("invalid", "almost", "false", "partially_valid", "partially valid", "partially"):
            return 0.0
        return 1.0 if label in ("valid", "true") else None
    found = _INVALID.search(text)
    if found:
        label = found.group(1).strip().rstrip(",}")
        return 0.0 if label in ("true", "invalid") else 1.0
    return None


def majority(samples: list[float | None]) -> float | None:
    positive = sum(1 for s in samples if s == 1.0)
    negative = sum(1 for s in samples if s == 0.0)
    if not positive and not negative:
        return None
    return 1.0 if positive > negative else 0.0


def render_prompt(judge: Judge, actual: Invocation, expected: Invocation, include_intermediate: bool) -> str:
    return judge.render(
        f"{NAME}.j2",
        prompt=content_text(expected.user_content),
        response=response_text(actual, include_intermediate),
        reference=response_text(expected, include_intermediate),
    )


async def score_final_response_match_v2(data: ScoringInput, options: LlmJudgeOptions, judge: Judge) -> MetricOutcome:
    if data.expected is None:
        raise NotEvaluable("needs expected invocations (a reference conversation)")
    if not data.actual:
        return MetricOutcome.not_evaluated("no actual invocations")
    judge_options = options.judge_model_options

    async def one_invocation(index: int, actual: Invocation, expected: Invocation) -> InvocationScore:
        prompt = render_prompt(judge, actual, expected, options.include_intermediate_responses_in_final)

        async def ask(i: int) -> str:
            return await judge.generate(
                NAME, judge_options.judge_model, prompt, judge_options.judge_model_config, i, VERSION
            )

        samples = await gather_all(*(ask(i) for i in range(judge_options.num_samples)))
        labels = [parse_label(text) for text in samples]
        score = majority(labels)  # ADK's score: the first num_samples alone, whatever re-judging adds
        judgements = known(labels)
        if disagree(judgements):
            judge.defer(DeferredJudgement(index, ask, parse_label, judge_options.num_samples))
        return InvocationScore(
            score,
            status_for(score, options.threshold),
            None if score is not None else "no verdict label",
            judgements=judgements,
        )

    pairs = zip(data.actual, data.expected, strict=True)
    per_invocation = await gather_all(*(one_invocation(i, a, e) for i, (a, e) in enumerate(pairs)))
    evaluated = [p.score for p in per_invocation if p.score is not None and p.status is not Status.NOT_EVALUATED]
    if not evaluated:
        raise UnparseableReply("no judge reply had a readable is_the_agent_response_valid label")
    overall = running_mean(evaluated)
    return MetricOutcome(overall, status_for(overall, options.threshold), per_invocation)
