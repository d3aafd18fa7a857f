"""`custom_metrics` from ADK's eval config: the user's function, called exactly as google-adk 2.13 calls it.

`{"custom_metrics": {"my_metric": {"code_config": {"name": "pkg.mod.fn"}}}, "criteria": {"my_metric": 0.5}}`
runs `fn(eval_metric, actual_invocations, expected_invocations, conversation_scenario)` with google-adk's own
types (the metric's threshold set to None, as ADK hands it over), sync or awaited. The `EvaluationResult` it
returns is used as ADK uses it: its overall score and status, and its per-invocation scores and statuses. The
function decides pass or fail, so a lower-is-better metric works; over several runs the direction is inferred
from the per-invocation verdicts, as ADK's AgentEvaluator does. A function that cannot be imported or raises
makes the metric not evaluated for that case, as in ADK.
"""

from __future__ import annotations

import importlib
import inspect
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from adk_eval_gate.criteria.engine.base import (
    CriterionSpec,
    InvocationScore,
    MetricOutcome,
    NotEvaluable,
    ScoringInput,
    Status,
)

_STATUS = {1: Status.PASSED, 2: Status.FAILED, 3: Status.NOT_EVALUATED, 4: Status.NOT_EVALUATED}


def _status(value: Any) -> Status:
    """ADK's EvalStatus (a plain Enum of 1-4); informational never passes or fails."""
    return _STATUS.get(getattr(value, "value", value), Status.NOT_EVALUATED)


class CustomOptions(BaseModel):
    """Any threshold (a custom metric's range is its own) plus whatever else the criterion object carries."""

    model_config = ConfigDict(extra="allow")
    threshold: float = Field(allow_inf_nan=False)


def _function(path: str) -> Any:
    module_name, _, name = path.rpartition(".")
    if not module_name:
        raise NotEvaluable(f"custom metric function {path!r} is not a dotted path (pkg.module.function)")
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError:
        # `adk eval` imports it with the agents' directory on sys.path; ours is where the gate runs from.
        if str(Path.cwd()) in sys.path:
            raise NotEvaluable(f"could not import custom metric function from {path}") from None
        sys.path.insert(0, str(Path.cwd()))
        return _function(path)
    function = getattr(module, name, None)
    if not callable(function):
        raise NotEvaluable(f"custom metric {path} does not refer to a callable")
    return function


def _adk(model: str, data: Any) -> Any:
    from google.adk.evaluation import eval_case

    return getattr(eval_case, model).model_validate(data.model_dump(mode="json", exclude_none=True))


def _eval_metric(name: str, path: str, options: CustomOptions) -> Any:
    from google.adk.evaluation.eval_metrics import BaseCriterion, EvalMetric

    return EvalMetric(
        metric_name=name,
        threshold=None,
        criterion=BaseCriterion.model_validate(options.model_dump()),
        custom_function_path=path,
    )


def custom_spec(name: str, path: str) -> CriterionSpec:
    async def score(data: ScoringInput, options: CustomOptions, _judge: Any) -> MetricOutcome:
        try:
            import google.adk.evaluation.eval_case  # noqa: F401
        except ImportError:
            raise NotEvaluable("custom metrics need google-adk (pip install 'adk-eval-gate[adk]')") from None
        function = _function(path)
        result = function(
            _eval_metric(name, path, options),
            [_adk("Invocation", i) for i in data.actual],
            [_adk("Invocation", i) for i in data.expected] if data.expected is not None else None,
            _adk("ConversationScenario", data.case.conversation_scenario) if data.case.conversation_scenario else None,
        )
        if inspect.isawaitable(result):
            result = await result
        status = _status(result.overall_eval_status)
        per_invocation = [InvocationScore(r.score, _status(r.eval_status)) for r in result.per_invocation_results]
        reason = None if result.overall_score is not None else f"{name} returned no score"
        return MetricOutcome(result.overall_score, status, per_invocation, reason)

    return CriterionSpec(
        name, CustomOptions, None, f"custom metric ({path})", judge_scorer=score, case_status=case_status
    )


def case_status(score: float | None, threshold: float, outcomes: Sequence[MetricOutcome | None]) -> Status:
    """One run: the function's own verdict (`adk eval`). Several: the pooled score against the threshold in the
    direction the per-invocation verdicts agree on, else `>=` (AgentEvaluator 2.13)."""
    scored = [o for o in outcomes if o is not None]
    if score is None:
        return Status.NOT_EVALUATED
    if len(outcomes) == 1 and scored:
        return scored[0].status
    directions = {
        (i.score > threshold) == (i.status is Status.PASSED)
        for o in scored
        for i in o.per_invocation
        if i.score is not None and i.score != threshold and i.status in (Status.PASSED, Status.FAILED)
    }
    higher_is_better = directions.pop() if len(directions) == 1 else True
    return Status.PASSED if (score >= threshold if higher_is_better else score <= threshold) else Status.FAILED


__all__ = ["CustomOptions", "case_status", "custom_spec"]
