"""`hallucinations_v1`: is every sentence the agent wrote grounded in what it was given and what its tools returned?

ADK 2.13's rules: the steps are the final response (context: every event of the turn) and, with
`evaluate_intermediate_nl_responses`, every text part of every event (context: the events before it). Each step is
one segmenter call (sentences in <sentence> tags) and one validator call (sentence/label/rationale/excerpt blocks);
`supported` and `not_applicable` score 1, `unsupported`, `contradictory` and `disputed` 0, anything else is skipped.
A step's score is the mean of its sentences; a step whose replies yield nothing is skipped; an invocation's score is
the mean of its steps; the case score the mean of the invocations that have one. `num_samples` is not used.
Failing closed where ADK would not: a judge call that cannot be made fails the criterion, and so does a run with
responses to check of which not one could be read from the judge's replies.
"""

from __future__ import annotations

import json
import re
import statistics

from adk_eval_gate.core.json_types import JsonObject
from adk_eval_gate.criteria.engine.criterion import (
    InvocationScore,
    MetricOutcome,
    ScoringInput,
    Status,
    UnparseableReply,
    status_for,
)
from adk_eval_gate.criteria.engine.judge import Judge, gather_all
from adk_eval_gate.criteria.engine.options import HallucinationsOptions
from adk_eval_gate.criteria.engine.prompts import developer_instructions
from adk_eval_gate.evalsets.adk_eval_schema import Invocation, InvocationEvent, InvocationEvents, content_text

NAME = "hallucinations_v1"
VERSION = "1"
POSITIVE, NEGATIVE = frozenset({"supported", "not_applicable"}), frozenset({"unsupported", "contradictory", "disputed"})
_SENTENCE = re.compile(r"<sentence>(.*?)</sentence>", re.DOTALL)
_VALIDATION = re.compile(
    r"sentence:(.*?)\nlabel:(.*?)\nrationale:(.*?)\nsupporting_excerpt:(.*?)\ncontradicting_excerpt:(.*?)"
    r"(?=\nsentence:|\Z)",
    re.DOTALL | re.IGNORECASE,
)


def parse_sentences(text: str) -> list[str]:
    return _SENTENCE.findall(text)


def parse_labels(text: str) -> list[str]:
    return [match.group(2).strip().lower() for match in _VALIDATION.finditer(text.strip())]


def label_scores(labels: list[str]) -> list[int]:
    return [1 if label in POSITIVE else 0 for label in labels if label in POSITIVE or label in NEGATIVE]


def context_for(invocation: Invocation, events: list[InvocationEvent]) -> str:
    instructions, tools = developer_instructions(invocation)
    lines = [
        f"Developer instructions:\n{instructions}\n",
        f"User prompt:\n{content_text(invocation.user_content)}\n",
        f"Tool definitions:\n{tools}\n",
    ]
    grounding = [
        {
            "step": i,
            "author": e.author,
            "grounding_metadata": e.grounding_metadata.model_dump(mode="json", exclude_none=True),
        }
        for i, e in enumerate(events)
        if e.grounding_metadata
    ]
    lines.append(
        "Grounding "
        f"metadata:\n{json.dumps(grounding, indent=2) if grounding else 'No grounding metadata was provided.'}\n"
    )
    for event in events:
        parts = event.content.parts if event.content and event.content.parts else []
        if text := "\n".join(p.text for p in parts if p.text):
            lines.append(f"{text}\n")
        if calls := [p.function_call.model_dump(mode="json", exclude_none=True) for p in parts if p.function_call]:
            lines.append("tool_calls:" + json.dumps(calls, indent=2) + "\n")
        if outputs := [
            p.function_response.model_dump(mode="json", exclude_none=True) for p in parts if p.function_response
        ]:
            lines.append("tool_outputs:" + json.dumps(outputs, indent=2) + "\n")
    return "\n".join(lines)


def steps(invocation: Invocation, intermediate: bool) -> list[tuple[str, str]]:
    """(response text, its context) pairs to check, as ADK selects them."""
    events = (
        list(invocation.intermediate_data.invocation_events)
        if isinstance(invocation.intermediate_data, InvocationEvents)
        else []
    )
    out: list[tuple[str, str]] = []
    before: list[InvocationEvent] = []
    if intermediate:
        for event in events:
            raw_texts = [p.text for p in (event.content.parts or [])] if event.content else []
            texts = [t for t in raw_texts if t]
            if texts:
                seen = [*before, event.model_copy(update={"content": None})] if event.grounding_metadata else before
                context = context_for(invocation, seen)
                out += [(text, context) for text in texts]
            before.append(event)
    else:
        before = events
    if final := content_text(invocation.final_response):
        out.append((final, context_for(invocation, before)))
    return out


async def _step(
    judge: Judge, model: str, config: JsonObject | None, text: str, context: str
) -> tuple[float | None, str | None]:
    """A step's score, or None with why (a skipped step does not count, as in ADK, but the reason is kept)."""
    segmented = await judge.generate(
        NAME, model, judge.render("hallucinations_v1_segmenter.j2", response=text), config, 0, VERSION
    )
    sentences = parse_sentences(segmented)
    if not sentences:
        return None, "the segmenter returned no <sentence> tags"
    tagged = "\n".join(f"<sentence>{s}</sentence>" for s in sentences)
    validated = await judge.generate(
        NAME,
        model,
        judge.render("hallucinations_v1_validator.j2", context=context, sentences=tagged),
        config,
        0,
        VERSION,
    )
    scores = label_scores(parse_labels(validated))
    return (statistics.mean(scores), None) if scores else (None, "the validator returned no usable label")


async def score_hallucinations(data: ScoringInput, options: HallucinationsOptions, judge: Judge) -> MetricOutcome:
    if not data.actual:
        return MetricOutcome.not_evaluated("no actual invocations")
    model, config = options.judge_model_options.judge_model, options.judge_model_options.judge_model_config
    unchecked: set[str] = set()  # why steps went unchecked, across invocations

    async def one(invocation: Invocation) -> InvocationScore:
        todo = steps(invocation, options.evaluate_intermediate_nl_responses)
        if not todo:
            return InvocationScore(None, Status.NOT_EVALUATED, "no natural-language response to check")
        stepped = await gather_all(*(_step(judge, model, config, t, c) for t, c in todo))
        scores = [s for s, _ in stepped if s is not None]
        skipped = sorted({reason for _, reason in stepped if reason})
        unchecked.update(skipped)
        score = statistics.mean(scores) if scores else None
        detail = f"{len(todo) - len(scores)} of {len(todo)} steps unchecked: {'; '.join(skipped)}" if skipped else None
        return InvocationScore(score, status_for(score, options.threshold), detail)

    per_invocation = await gather_all(*(one(i) for i in data.actual))
    valid = [p.score for p in per_invocation if p.score is not None]
    if not valid and unchecked:
        raise UnparseableReply(f"no sentence could be checked: {'; '.join(sorted(unchecked))}")
    if not valid:
        return MetricOutcome(None, Status.NOT_EVALUATED, per_invocation, "no natural-language response to check")
    overall = statistics.mean(valid)
    return MetricOutcome(overall, status_for(overall, options.threshold), per_invocation)
