"""Criterion names → specs, and resolution of a `criteria` mapping (ADK's eval_config shape) into typed options.

Every metric name ADK 2.13 registers is known here. Names this build cannot score yet resolve to specs
with an `unavailable_reason`: they are reported as not evaluated (ADK's behaviour for a metric that
cannot run), never silently dropped. A name ADK does not know is an error with a did-you-mean.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from adk_eval_gate.core.errors import InputError, did_you_mean, format_loc
from adk_eval_gate.core.json_types import JsonObject
from adk_eval_gate.core.validation import LineLookup, file_line_lookup, input_error_from
from adk_eval_gate.criteria.custom import custom_spec
from adk_eval_gate.criteria.engine import options as o
from adk_eval_gate.criteria.engine.criterion import ConfiguredCriterion, CriterionSpec, SomeCriterion, SomeCriterionSpec
from adk_eval_gate.criteria.final_response_match_v2 import score_final_response_match_v2
from adk_eval_gate.criteria.hallucinations import score_hallucinations
from adk_eval_gate.criteria.multi_turn_trajectory import score_multi_turn_trajectory
from adk_eval_gate.criteria.response_match import score_response_match
from adk_eval_gate.criteria.rubrics import score_final_response_quality, score_tool_use_quality
from adk_eval_gate.criteria.safety import score_safety
from adk_eval_gate.criteria.tool_trajectory import score_tool_trajectory
from adk_eval_gate.criteria.trajectory_overlap import (
    score_single_tool_use,
    score_trajectory_precision,
    score_trajectory_recall,
)
from adk_eval_gate.criteria.user_simulator_quality import score_user_simulator_quality
from adk_eval_gate.criteria.vertex_metrics import CoherenceOptions, multi_turn_scorer, score_coherence
from adk_eval_gate.evalsets.criterion_names import INFORMATIONAL_METRICS

_SPECS: tuple[SomeCriterionSpec, ...] = (
    CriterionSpec(
        "tool_trajectory_avg_score",
        o.ToolTrajectoryOptions,
        score_tool_trajectory,
        "tool-call trajectory match (EXACT / IN_ORDER / ANY_ORDER), mean over turns",
        needs_reference=True,
    ),
    CriterionSpec(
        "response_match_score",
        o.ThresholdOptions,
        score_response_match,
        "ROUGE-1 F-measure of the final response against the reference",
        needs_reference=True,
    ),
    CriterionSpec(
        "final_response_match_v2",
        o.LlmJudgeOptions,
        None,
        "LLM judge: is the final response valid against the reference",
        needs_reference=True,
        judged=True,
        judge_scorer=score_final_response_match_v2,
    ),
    CriterionSpec(
        "rubric_based_final_response_quality_v1",
        o.RubricsOptions,
        None,
        "LLM judge: rubric verdicts on the final response",
        judged=True,
        judge_scorer=score_final_response_quality,
    ),
    CriterionSpec(
        "rubric_based_tool_use_quality_v1",
        o.RubricsOptions,
        None,
        "LLM judge: rubric verdicts on tool use",
        judged=True,
        judge_scorer=score_tool_use_quality,
    ),
    CriterionSpec(
        "rubric_based_multi_turn_trajectory_quality_v1",
        o.RubricsOptions,
        None,
        "LLM judge: rubric verdicts on the whole dialogue",
        judged=True,
        judge_scorer=score_multi_turn_trajectory,
    ),
    CriterionSpec(
        "hallucinations_v1",
        o.HallucinationsOptions,
        None,
        "LLM judge: share of sentences supported by the context",
        judged=True,
        judge_scorer=score_hallucinations,
    ),
    CriterionSpec(
        "per_turn_user_simulator_quality_v1",
        o.UserSimulatorQualityOptions,
        None,
        "LLM judge: fidelity of the user simulator to the plan",
        judged=True,
        judge_scorer=score_user_simulator_quality,
    ),
    CriterionSpec(
        "safety_v1",
        o.ThresholdOptions,
        None,
        "Vertex AI safety metric (1 safe, 0 unsafe)",
        judged=True,
        judge_scorer=score_safety,
    ),
    # adk-eval-gate's own, beyond ADK's (the `gate_` prefix says so): see trajectory_overlap.py.
    CriterionSpec(
        "gate_trajectory_precision",
        o.TrajectoryOverlapOptions,
        score_trajectory_precision,
        "adk-eval-gate: share of actual tool calls that were expected, mean over turns",
        needs_reference=True,
    ),
    CriterionSpec(
        "gate_trajectory_recall",
        o.TrajectoryOverlapOptions,
        score_trajectory_recall,
        "adk-eval-gate: share of expected tool calls that were made, mean over turns",
        needs_reference=True,
    ),
    CriterionSpec(
        "gate_trajectory_single_tool_use",
        o.SingleToolUseOptions,
        score_single_tool_use,
        "adk-eval-gate: whether the named tool was called, mean over turns",
    ),
    CriterionSpec(
        "response_evaluation_score",
        CoherenceOptions,
        None,
        "Vertex AI coherence (1-5)",
        needs_reference=True,
        judged=True,
        judge_scorer=score_coherence,
    ),
    CriterionSpec(
        "multi_turn_task_success_v1",
        o.ThresholdOptions,
        None,
        "Vertex AI multi-turn task success",
        judged=True,
        judge_scorer=multi_turn_scorer("multi_turn_task_success_v1"),
    ),
    CriterionSpec(
        "multi_turn_trajectory_quality_v1",
        o.ThresholdOptions,
        None,
        "Vertex AI multi-turn trajectory quality",
        judged=True,
        judge_scorer=multi_turn_scorer("multi_turn_trajectory_quality_v1"),
    ),
    CriterionSpec(
        "multi_turn_tool_use_quality_v1",
        o.ThresholdOptions,
        None,
        "Vertex AI multi-turn tool use quality",
        judged=True,
        judge_scorer=multi_turn_scorer("multi_turn_tool_use_quality_v1"),
    ),
)

REGISTRY: dict[str, SomeCriterionSpec] = {spec.name: spec for spec in _SPECS}

INFORMATIONAL = INFORMATIONAL_METRICS

DEFAULT_CRITERIA: JsonObject = {"tool_trajectory_avg_score": 1.0, "response_match_score": 0.8}


def _custom_spec(name: str, path: str | None) -> SomeCriterionSpec:
    if path:
        return custom_spec(name, path)
    return CriterionSpec(
        name,
        o.ThresholdOptions,
        None,
        "custom metric (code_config)",
        unavailable_reason="the custom metric's code_config names no function",
    )


def resolve_criteria(
    raw: Mapping[str, Any],
    file: str | None,
    *,
    loc: tuple[str | int, ...] = ("criteria",),
    custom_metrics: Mapping[str, str] | Iterable[str] = (),
    lines: LineLookup | None = None,
    ignored: list[InputError] | None = None,
) -> list[SomeCriterion]:
    """Validates a `criteria` mapping; errors name `file` and `<loc>.<criterion>[.<option>]`.

    `ignored` (a file ADK reads: eval_config.json / test_config.json) collects an unknown option of a criterion as
    a warning, as ADK's criteria keep and never read it; without it (the gate's own config) it is an error."""

    # an eval_config.json (JSON) has no composed nodes at hand: its lines are looked up only if an error asks
    lines = lines or (file_line_lookup(Path(file)) if file else None)

    def fail(at: tuple[str | int, ...], problem: str, fix: str) -> InputError:
        return InputError(file, format_loc(at), problem, fix, line=lines(at) if lines else None)

    _check_shape(raw, loc, fail)
    # ADK looks a name up in custom_metrics first: a custom metric may even shadow a built-in one.
    custom: dict[str, str | None] = (
        dict(custom_metrics) if isinstance(custom_metrics, Mapping) else dict.fromkeys(custom_metrics)
    )
    resolved: list[SomeCriterion] = []
    for name, value in raw.items():
        if not isinstance(name, str):
            raise fail(loc, f"criterion name {name!r} is not a string", "use a metric name")
        where = (*loc, name)
        spec = _spec_for(name, custom, where, fail)
        payload = {"threshold": value} if not isinstance(value, Mapping) else dict(value)
        if ignored is not None:
            at = where if not isinstance(value, Mapping) else (*where, "threshold")
            payload = _without_unknown_options(payload, spec, file, (where, at), lines, ignored)
        if isinstance(value, Mapping) and "threshold" not in payload:
            raise fail((*where, "threshold"), "is required but missing", "add `threshold: <0..1>`")
        try:
            options = spec.options_model.model_validate(payload)
        except ValidationError as exc:
            if isinstance(value, Mapping):
                raise input_error_from(exc, file, prefix=where, model=spec.options_model, lines=lines) from None
            error = input_error_from(exc, file, model=spec.options_model)
            raise fail(where, error.problem, error.fix or "use a number between 0 and 1") from None
        resolved.append(ConfiguredCriterion(spec, options))
    return resolved


_Fail = Callable[[tuple[str | int, ...], str, str], InputError]


def _check_shape(raw: object, loc: tuple[str | int, ...], fail: _Fail) -> None:
    if not isinstance(raw, Mapping):
        raise fail(
            loc,
            f"expected a mapping of criterion names, got {type(raw).__name__}",
            "write e.g. {tool_trajectory_avg_score: 1.0}",
        )
    if not raw:
        raise fail(
            loc,
            "no criteria configured",
            "name at least one, e.g. tool_trajectory_avg_score: 1.0 (or drop the key for ADK's defaults)",
        )


def _spec_for(name: str, custom: dict[str, str | None], where: tuple[str | int, ...], fail: _Fail) -> SomeCriterionSpec:
    """The criterion a name stands for: a custom metric of the eval config first (as ADK looks it up), else ours."""
    if name in INFORMATIONAL:
        raise fail(
            where,
            "is an informational metric that takes no threshold",
            "remove it from criteria (ADK reports it on its own)",
        )
    spec = _custom_spec(name, custom[name]) if name in custom else REGISTRY.get(name)
    if spec is None:
        guess = did_you_mean(name, [*REGISTRY, *custom])
        fix = f"did you mean `{guess}`?" if guess else f"use one of {', '.join(REGISTRY)}"
        raise fail(where, "is not an ADK evaluation criterion", fix)
    return spec


def _without_unknown_options(
    payload: JsonObject,
    spec: SomeCriterionSpec,
    file: str | None,
    locs: tuple[tuple[str | int, ...], tuple[str | int, ...]],
    lines: LineLookup | None,
    ignored: list[InputError],
) -> JsonObject:
    """The criterion (at `locs[0]`, its threshold at `locs[1]`) as ADK reads it: a quoted or boolean threshold as
    its number (pydantic's lax float), an unknown option dropped (kept for a custom metric, whose function may
    read it); each with a warning."""
    threshold = payload.get("threshold")
    if isinstance(threshold, bool) or (isinstance(threshold, str) and _number(threshold) is not None):
        number = float(threshold) if isinstance(threshold, bool) else _number(threshold)
        where, at = locs
        ignored.append(
            InputError(
                file,
                format_loc(at),
                f"{threshold!r} is not a number; ADK reads it as {number}",
                f"write {number} without quotes",
                line=lines(at) if lines else None,
            )
        )
        payload = {**payload, "threshold": number}
    if spec.options_model.model_config.get("extra") == "allow":
        return payload
    where = locs[0]
    fields = spec.options_model.model_fields
    known = set(fields) | {f.alias for f in fields.values() if f.alias}
    for key in [k for k in payload if isinstance(k, str) and k not in known]:
        guess = did_you_mean(key, sorted(known))
        at = (*where, key)
        ignored.append(
            InputError(
                file,
                format_loc(at),
                f"is not an option of {where[-1]}, so ADK ignores it and the option's default applies",
                f"did you mean `{guess}`?" if guess else f"remove it (options: {', '.join(sorted(fields))})",
                line=lines(at) if lines else None,
            )
        )
        payload = {k: v for k, v in payload.items() if k != key}
    return payload


def _number(text: str) -> float | None:
    try:
        value = float(text)
    except ValueError:
        return None
    return value if math.isfinite(value) else None
