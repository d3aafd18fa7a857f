"""`custom_metrics` from ADK's eval config: the user's function, called exactly as google-adk 2.13 calls it.

`{"custom_metrics": {"my_metric": {"code_config": {"name": "pkg.mod.fn"}}}, "criteria": {"my_metric": 0.5}}`
runs `fn(eval_metric, actual_invocations, expected_invocations, conversation_scenario)` with google-adk's own
types (the metric's threshold set to None, as ADK hands it over), sync or awaited. The `EvaluationResult` it
returns is used as ADK uses it: its overall score and status, and its per-invocation scores and statuses. The
function decides pass or fail, so a lower-is-better metric works; over several runs the direction is inferred
from the per-invocation verdicts, as ADK's AgentEvaluator does. A function that cannot be imported or raises
makes the metric not evaluated for that case, as in ADK. While this process holds one of GitHub's tokens the
function runs in a process of its own (custom_function.py).
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import ConfigDict, Field

from adk_eval_gate.core.command_files import runs_pull_request_code_elsewhere
from adk_eval_gate.criteria.custom_function import metric_call, score_call, score_elsewhere
from adk_eval_gate.criteria.engine.criterion import (
    CriterionOptions,
    CriterionSpec,
    MetricOutcome,
    ScoringInput,
    SomeCriterionSpec,
    Status,
)
from adk_eval_gate.criteria.engine.judge import Judge


class CustomOptions(CriterionOptions):
    """Any threshold (a custom metric's range is its own) plus whatever else the criterion object carries."""

    model_config = ConfigDict(extra="allow")
    threshold: float = Field(allow_inf_nan=False)


def custom_spec(name: str, path: str) -> SomeCriterionSpec:
    async def score(data: ScoringInput, options: CustomOptions, judge: Judge) -> MetricOutcome:
        call = metric_call(name, path, data, options)
        # an object walk in this process would find the token, a thread left here could write the runner's files
        # after their check (core/command_files.py): the code runs in a process of its own
        if runs_pull_request_code_elsewhere():
            return await score_elsewhere(call, judge.metric_process)
        return await score_call(call)

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
