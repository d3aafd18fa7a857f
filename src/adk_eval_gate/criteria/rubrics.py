"""Rubric-judged criteria (ADK 2.13 `rubric_based_evaluator.py` rules).

* Effective rubrics of an invocation: the criterion's own, then the case's and the expected invocation's rubrics
  of this criterion's `type` (others are silently dropped, as in ADK); a repeated `rubric_id` or an empty list
  leaves the criterion not evaluated. A criterion with no rubrics of its own and not one case of its eval set with
  rubrics of its type can never be judged (ADK raises "Rubrics are required." on every case): `check_rubrics`
  stops `validate` and `run` with exit 2 instead.
* A judge reply is parsed into ID / Property / Rationale / Verdict blocks (all-or-nothing: unequal counts parse
  to nothing); a verdict containing "yes" scores 1, else one containing "no" scores 0. Verdicts map to rubrics by
  ID, else by normalised property text — against the *last* invocation's rubric list, ADK's quirk.
* Per invocation, each rubric's samples are majority-voted (ties negative); the invocation score is the mean of its
  rubric scores. The case score is the mean of *all* rubric scores of all invocations, flattened.
"""

from __future__ import annotations

import re
import statistics
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from adk_eval_gate.core.errors import InputError, format_loc
from adk_eval_gate.core.validation import LineLookup
from adk_eval_gate.criteria.engine.criterion import (
    InvocationScore,
    MetricOutcome,
    NotEvaluable,
    ScoringInput,
    SomeCriterion,
    UnparseableReply,
    status_for,
)
from adk_eval_gate.criteria.engine.judge import Judge, gather_all
from adk_eval_gate.criteria.engine.options import RubricsOptions
from adk_eval_gate.criteria.engine.prompts import developer_instructions, response_text, tool_steps
from adk_eval_gate.criteria.judge_agreement import DeferredJudgement, disagree, known
from adk_eval_gate.evalsets.adk_eval_schema import EvalCase, EvalSet, Invocation, Rubric, content_text

_PROPERTY = re.compile(r"(?m)^\s*Property: (.*)$")
_ID = re.compile(r"(?m)^\s*ID: (.*)$")
_RATIONALE = re.compile(r"(?<=Rationale: )(.*)")
_VERDICT = re.compile(r"(?<=Verdict: )(.*)")
_SMART = str.maketrans({"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"', "\u2013": "-", "\u2014": "-"})

# (rubric id, score: 1.0 yes, 0.0 no, None undecided, the judge's rationale)
RubricVerdict = tuple[str, float | None, str]


@dataclass(frozen=True)
class Verdict:
    rubric_id: str | None
    property_text: str
    rationale: str
    score: float | None


def normalize(text: object) -> str:
    if not isinstance(text, str):
        return ""
    text = unicodedata.normalize("NFKC", text).translate(_SMART)
    return re.sub(r"\s+", " ", text).strip(" *_`#>-\u2022\"'").lower()


def parse(text: str | None) -> list[Verdict]:
    if not text:
        return []
    properties = list(_PROPERTY.finditer(text))
    ids = list(_ID.finditer(text))
    rationales = _RATIONALE.findall(text)
    scores = [1.0 if "yes" in v.lower() else 0.0 if "no" in v.lower() else None for v in _VERDICT.findall(text)]
    if not len(properties) == len(rationales) == len(scores):
        return []
    verdicts = []
    for i, (prop, rationale, score) in enumerate(zip(properties, rationales, scores, strict=True)):
        previous = properties[i - 1].start() if i > 0 else -1
        rubric_id = None
        for match in ids:
            if previous < match.start() < prop.start():
                rubric_id = match.group(1).strip() or None
        verdicts.append(Verdict(rubric_id, prop.group(1).strip(), rationale.strip(), score))
    return verdicts


def effective_rubrics(
    criterion: Sequence[Rubric], case: EvalCase, expected: Invocation | None, rubric_type: str
) -> list[Rubric]:
    invocation = list(case.rubrics or []) + list((expected.rubrics if expected else None) or [])
    chosen: dict[str, Rubric] = {}
    for rubric in [*criterion, *(r for r in invocation if r.type == rubric_type)]:
        if rubric.rubric_id in chosen:
            raise NotEvaluable(f"rubric_id {rubric.rubric_id!r} is defined twice")
        chosen[rubric.rubric_id] = rubric
    if not chosen:
        raise NotEvaluable(f"rubrics are required: give the criterion `rubrics` or cases rubrics of type {rubric_type}")
    return list(chosen.values())


RUBRIC_TYPES = {
    "rubric_based_final_response_quality_v1": "FINAL_RESPONSE_QUALITY",
    "rubric_based_tool_use_quality_v1": "TOOL_USE_QUALITY",
    "rubric_based_multi_turn_trajectory_quality_v1": "TRAJECTORY_QUALITY",
}


def _case_has_rubrics(case: EvalCase, rubric_type: str) -> bool:
    invocation_rubrics = [r for invocation in case.conversation or [] for r in invocation.rubrics or []]
    return any(r.type == rubric_type for r in [*(case.rubrics or []), *invocation_rubrics])


def check_rubrics(
    criteria: Sequence[SomeCriterion],
    eval_set: EvalSet,
    eval_set_file: str,
    criteria_file: str | None,
    loc: tuple[str | int, ...] = ("criteria",),
    lines: LineLookup | None = None,
) -> None:
    """Exit 2 for a rubric criterion that no case of this eval set could be judged by."""
    for criterion in criteria:
        rubric_type = RUBRIC_TYPES.get(criterion.name)
        if rubric_type is None or criterion.options.rubrics:
            continue
        if any(_case_has_rubrics(case, rubric_type) for case in eval_set.eval_cases):
            continue
        where = (*loc, criterion.name, "rubrics")
        raise InputError(
            criteria_file or eval_set_file,
            format_loc(where),
            f"no rubrics: neither the criterion nor any case of {eval_set_file} has rubrics of type {rubric_type}, "
            "so ADK raises 'Rubrics are required.' on every case",
            f"add `rubrics: [{{rubric_id: ..., rubric_content: {{text_property: ...}}}}]` to the criterion, or "
            f"rubrics with `type: {rubric_type}` to the cases",
            line=lines(where) if lines else None,
        )


def map_verdicts(verdicts: list[Verdict], rubrics: list[Rubric]) -> list[tuple[str, float | None, str]]:
    by_id = {r.rubric_id: r for r in rubrics}
    by_text = {normalize(r.rubric_content.text_property): r for r in rubrics}
    mapped = []
    for verdict in verdicts:
        rubric = by_id.get(verdict.rubric_id) if verdict.rubric_id else None
        rubric = rubric or by_text.get(normalize(verdict.property_text))
        if rubric is not None:
            mapped.append((rubric.rubric_id, verdict.score, verdict.rationale))
    return mapped


def majority(samples: list[list[RubricVerdict]]) -> list[RubricVerdict]:
    grouped: dict[str, tuple[list[RubricVerdict], list[RubricVerdict], list[RubricVerdict]]] = {}
    for sample in samples:
        for item in sample:
            none, positive, negative = grouped.setdefault(item[0], ([], [], []))
            (none if item[1] is None else positive if item[1] == 1.0 else negative).append(item)
    out = []
    for none, positive, negative in grouped.values():
        out.append(
            none[0] if not positive and not negative else positive[0] if len(positive) > len(negative) else negative[0]
        )
    return out


def mean_score(items: list[tuple[str, float | None, str]]) -> float | None:
    scores = [score for _, score, _ in items if score is not None]
    return statistics.mean(scores) if scores else None


@dataclass(frozen=True)
class RubricJudgeKind:
    """Which rubric judge scores: its metric name, the rubric type it reads from a case, how a prompt is written."""

    name: str
    rubric_type: str
    render: Callable[[Judge, Invocation, list[Rubric]], str]
    version: str = "1"


async def score_with_rubrics(
    data: ScoringInput, options: RubricsOptions, judge: Judge, kind: RubricJudgeKind, *, offset: int = 0
) -> MetricOutcome:
    """`offset`: where `data.actual`'s first invocation stands in the run (multi-turn judges only its last)."""
    name, version, rubric_type, render = kind.name, kind.version, kind.rubric_type, kind.render
    if not data.actual:
        return MetricOutcome.not_evaluated("no actual invocations")
    expected = list(data.expected) if data.expected is not None else [None] * len(data.actual)
    criterion_rubrics = [Rubric.model_validate(r.model_dump()) for r in options.rubrics]
    lists = [effective_rubrics(criterion_rubrics, data.case, e, rubric_type) for e in expected]
    prompts = [render(judge, actual, rubrics) for actual, rubrics in zip(data.actual, lists, strict=True)]
    mapping_rubrics = lists[-1]  # ADK maps every verdict against the last invocation's rubric list
    judge_options = options.judge_model_options

    def judgement(text: str) -> float | None:
        """One sample as one judgement of the invocation: the mean of its rubric verdicts (for judge noise)."""
        return mean_score(map_verdicts(parse(text), mapping_rubrics))

    async def one(index: int, prompt: str) -> tuple[list[RubricVerdict], InvocationScore]:
        async def ask(i: int) -> str:
            return await judge.generate(
                name, judge_options.judge_model, prompt, judge_options.judge_model_config, i, version
            )

        samples = await gather_all(*(ask(i) for i in range(judge_options.num_samples)))
        voted = majority([map_verdicts(parse(text), mapping_rubrics) for text in samples])
        score = mean_score(voted)
        detail = (
            "; ".join(f"{rid}: {'yes' if s == 1.0 else 'no' if s is not None else '?'}" for rid, s, _ in voted) or None
        )
        judgements = known(judgement(text) for text in samples)
        if disagree(judgements):
            judge.defer(DeferredJudgement(offset + index, ask, judgement, judge_options.num_samples))
        return voted, InvocationScore(score, status_for(score, options.threshold), detail, judgements=judgements)

    results = await gather_all(*(one(i, p) for i, p in enumerate(prompts)))
    flattened = [item for voted, _ in results for item in voted]
    overall = mean_score(flattened)
    per_invocation = [score for _, score in results]
    if overall is None:
        raise UnparseableReply(
            "no judge reply had a rubric verdict (ID / Property / Rationale / Verdict) for a known rubric"
        )
    return MetricOutcome(overall, status_for(overall, options.threshold), per_invocation)


def rubric_lines(rubrics: list[Rubric]) -> str:
    return "\n".join(f"*  [id: {r.rubric_id}] {r.rubric_content.text_property}" for r in rubrics)


def render_final_response(include_intermediate: bool) -> Callable[[Judge, Invocation, list[Rubric]], str]:
    def render(judge: Judge, invocation: Invocation, rubrics: list[Rubric]) -> str:
        instructions, tools = developer_instructions(invocation)
        return judge.render(
            "rubric_based_final_response_quality_v1.j2",
            developer_instructions=instructions,
            tool_declarations=tools,
            user_input=content_text(invocation.user_content),
            response_steps=tool_steps(invocation),
            final_response=response_text(invocation, include_intermediate),
            rubrics=rubric_lines(rubrics),
        )

    return render


def render_tool_use(judge: Judge, invocation: Invocation, rubrics: list[Rubric]) -> str:
    _, tools = developer_instructions(invocation)
    return judge.render(
        "rubric_based_tool_use_quality_v1.j2",
        tool_declarations=tools,
        user_input=content_text(invocation.user_content),
        tool_usage=tool_steps(invocation),
        rubrics=rubric_lines(rubrics),
    )


async def score_final_response_quality(data: ScoringInput, options: RubricsOptions, judge: Judge) -> MetricOutcome:
    kind = RubricJudgeKind(
        "rubric_based_final_response_quality_v1",
        "FINAL_RESPONSE_QUALITY",
        render_final_response(options.include_intermediate_responses_in_final),
    )
    return await score_with_rubrics(data, options, judge, kind)


async def score_tool_use_quality(data: ScoringInput, options: RubricsOptions, judge: Judge) -> MetricOutcome:
    kind = RubricJudgeKind("rubric_based_tool_use_quality_v1", "TOOL_USE_QUALITY", render_tool_use)
    return await score_with_rubrics(data, options, judge, kind)
