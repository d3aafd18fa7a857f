"""agents-cli metrics (eval_config.yaml) as criteria: one spec per metric of `metrics_to_run`.

A metric has no threshold in agents-cli: a score is a score. The agent's `thresholds:` in our config turns one
into pass/fail (`score >= threshold`); without one, a scored metric passes its case and is still compared with
the baseline, so a drop still gates as a regression. Code metrics run here (agents_cli_code.py); prompt-template,
predefined and remote code metrics on the evaluation service (agents_cli_service.py), and so do exact_match, bleu,
rouge_1 and rouge_l_sum (agents_cli_computation.py). Other computation metrics are not run: they are errors with
that reason, so the gate fails closed rather than pass what was not evaluated.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from adk_eval_gate.core.errors import InputError, did_you_mean, format_loc
from adk_eval_gate.core.numbers import MAX_MAGNITUDE, in_range
from adk_eval_gate.core.validation import LineLookup
from adk_eval_gate.criteria.agents_cli_code import run_code_metric
from adk_eval_gate.criteria.agents_cli_computation import INPUTS, computation_scorer
from adk_eval_gate.criteria.agents_cli_service import service_scorer
from adk_eval_gate.criteria.engine.criterion import (
    CaseStatusRule,
    Cause,
    ConfiguredCriterion,
    CriterionSpec,
    InvocationScore,
    JudgeScorer,
    MetricOutcome,
    ScoringInput,
    SomeCriterion,
    SomeCriterionSpec,
    Status,
)
from adk_eval_gate.criteria.engine.judge import Judge
from adk_eval_gate.criteria.engine.options import AgentsCliOptions
from adk_eval_gate.evalsets.agents_cli_config import AgentsCliConfig, AgentsCliMetric, is_service_computed
from adk_eval_gate.evalsets.agents_cli_traces import generated_case, metric_instance


def _status(has_threshold: bool) -> CaseStatusRule:
    def rule(score: float | None, threshold: float, outcomes: Sequence[MetricOutcome | None]) -> Status:
        if score is None:
            return Status.NOT_EVALUATED
        if not has_threshold:
            return Status.PASSED
        return Status.PASSED if score >= threshold else Status.FAILED

    return rule


def _code_scorer(metric: AgentsCliMetric, cwd: Path) -> JudgeScorer[AgentsCliOptions]:
    assert metric.source is not None
    source = metric.source

    async def score(data: ScoringInput, options: AgentsCliOptions, _judge: Judge) -> MetricOutcome:
        count = len(data.actual)
        instance = metric_instance(generated_case(data.case, data.actual))
        if isinstance(instance, str):  # the agent gave no text response: the SDK errors the case
            return MetricOutcome.error(f"{metric.name}: {instance}", Cause.INTERNAL_ERROR, count)
        result = await run_code_metric(metric.name, source, instance, cwd)
        if result.error is not None or result.score is None:
            return MetricOutcome.error(f"{metric.name}: {result.error}", Cause.INTERNAL_ERROR, count)
        passed = not options.has_threshold or result.score >= options.threshold
        status = Status.PASSED if passed else Status.FAILED
        per_turn = [InvocationScore(result.score, status, result.explanation)] * count
        return MetricOutcome(result.score, status, per_turn)

    return score


def _unsupported_scorer(metric: AgentsCliMetric, why: str) -> JudgeScorer[AgentsCliOptions]:
    reason = (
        f"{metric.name} is {why}, which adk-eval-gate does not run yet; not evaluated (gate agents-cli's own results)"
    )

    async def score(data: ScoringInput, _options: AgentsCliOptions, _judge: Judge) -> MetricOutcome:
        return MetricOutcome.error(reason, Cause.UNSUPPORTED, len(data.actual))

    return score


def agents_cli_spec(metric: AgentsCliMetric, cwd: Path, has_threshold: bool) -> SomeCriterionSpec:
    summary = f"agents-cli {metric.kind.replace('_', ' ')} metric"
    if metric.kind == "code":
        where = Path(metric.source_file).name if metric.source_file else "inline"
        scorer, summary = _code_scorer(metric, cwd), f"agents-cli code metric ({where})"
    elif metric.entry is not None and metric.name.lower() in INPUTS:
        scorer = computation_scorer(metric.name)
    elif is_service_computed(metric.name):
        scorer = _unsupported_scorer(metric, "a computation metric other than exact_match, bleu, rouge_1, rouge_l_sum")
    else:
        scorer = service_scorer(metric)
    return CriterionSpec(
        metric.name, AgentsCliOptions, None, summary, judge_scorer=scorer, case_status=_status(has_threshold)
    )


def resolve_agents_cli_metrics(
    config: AgentsCliConfig,
    thresholds: Mapping[str, Any] | None,
    config_file: str,
    loc: tuple[str | int, ...],
    lines: LineLookup | None,
    cwd: Path | None = None,
) -> list[SomeCriterion]:
    """Every metric of the config, with its threshold from the workflow's `thresholds:` (at `loc`) when given.
    Code metrics run in `cwd`: the workflow's folder, the project root `agents-cli eval grade` runs from."""
    names = [metric.name for metric in config.metrics]
    for name in thresholds or {}:
        if name not in names:
            guess = did_you_mean(str(name), names)
            raise InputError(
                config_file,
                format_loc((*loc, name)),
                f"is not a metric of {config.path.name}'s metrics_to_run",
                f"did you mean `{guess}`?" if guess else f"use one of {', '.join(names)}",
                line=lines((*loc, name)) if lines else None,
            )
    resolved = []
    for metric in config.metrics:
        given = metric.name in (thresholds or {})
        value = (thresholds or {}).get(metric.name, 0.0)
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not in_range(value):
            where = (*loc, metric.name)
            raise InputError(
                config_file,
                format_loc(where),
                f"{value!r} is not a threshold",
                f"give a finite number within ±{MAX_MAGNITUDE:g} on the metric's own scale, "
                "e.g. 0.8 (pass at score >= threshold)",
                line=lines(where) if lines else None,
            )
        options = AgentsCliOptions(threshold=value, has_threshold=given)
        spec = agents_cli_spec(metric, cwd or config.path.parent, given)
        resolved.append(ConfiguredCriterion(spec, options))
    return resolved
