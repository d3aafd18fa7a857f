"""Calling the user's function of a `custom_metrics` entry exactly as google-adk 2.13 calls it: in this process, or
in a process of its own while this one holds GitHub's tokens, since the pull request's code running here could walk
this process's objects (or read its memory) and find them.

That process is one per run (engine/metric_process.py: the run's judge owns it and the run ends it), started at
the first call from a clean environment (core/isolation.py keeps it out of this process's memory); it serves
every call in turn, so a function's module state lives across calls as
it does in process. Calls and answers are JSON lines: the process runs the pull request's code, so nothing it
sends is unpickled or trusted beyond numbers and a status. What the function prints reaches our (masking) log.
"""

from __future__ import annotations

import asyncio
import importlib
import inspect
import json
import os
import sys
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from adk_eval_gate.core.clip import clip
from adk_eval_gate.core.json_types import JsonObject
from adk_eval_gate.core.numbers import in_range
from adk_eval_gate.criteria.engine.criterion import InvocationScore, MetricOutcome, NotEvaluable, ScoringInput, Status
from adk_eval_gate.criteria.engine.metric_process import MetricProcess, MetricProcessError

_STATUS = {1: Status.PASSED, 2: Status.FAILED, 3: Status.NOT_EVALUATED, 4: Status.NOT_EVALUATED}


def _status(value: Any) -> Status:
    """ADK's EvalStatus (a plain Enum of 1-4); informational never passes or fails."""
    return _STATUS.get(getattr(value, "value", value), Status.NOT_EVALUATED)


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


def _adk(model: str, data: JsonObject) -> Any:
    from google.adk.evaluation import eval_case

    return getattr(eval_case, model).model_validate(data)


def _eval_metric(name: str, path: str, options: JsonObject) -> Any:
    from google.adk.evaluation.eval_metrics import BaseCriterion, EvalMetric

    return EvalMetric(
        metric_name=name,
        threshold=None,
        criterion=BaseCriterion.model_validate(options),
        custom_function_path=path,
    )


def metric_call(name: str, path: str, data: ScoringInput, options: BaseModel) -> JsonObject:
    """One call of the user's function as JSON: what `score_call` takes, here or in a process of its own."""

    def dump(value: BaseModel) -> JsonObject:
        return value.model_dump(mode="json", exclude_none=True)

    scenario = data.case.conversation_scenario
    return {
        "name": name,
        "path": path,
        "options": options.model_dump(mode="json"),
        "actual": [dump(i) for i in data.actual],
        "expected": [dump(i) for i in data.expected] if data.expected is not None else None,
        "scenario": dump(scenario) if scenario else None,
    }


async def score_call(call: JsonObject) -> MetricOutcome:
    """Imports and runs the user's function: its code runs in the calling process."""
    try:
        import google.adk.evaluation.eval_case  # noqa: F401
    except ImportError:
        raise NotEvaluable("custom metrics need google-adk (pip install 'adk-eval-gate[adk]')") from None
    name, path = call["name"], call["path"]
    function = _function(path)
    result = function(
        _eval_metric(name, path, call["options"]),
        [_adk("Invocation", i) for i in call["actual"]],
        [_adk("Invocation", i) for i in call["expected"]] if call["expected"] is not None else None,
        _adk("ConversationScenario", call["scenario"]) if call["scenario"] else None,
    )
    if inspect.isawaitable(result):
        result = await result
    status = _status(result.overall_eval_status)
    per_invocation = [InvocationScore(r.score, _status(r.eval_status)) for r in result.per_invocation_results]
    reason = None if result.overall_score is not None else f"{name} returned no score"
    return MetricOutcome(result.overall_score, status, per_invocation, reason)


async def score_elsewhere(call: JsonObject, process: MetricProcess) -> MetricOutcome:
    """`custom.score_call` run in the run's metric process: the same outcome, or the same NotEvaluable, or an
    error."""
    try:
        reply = await asyncio.to_thread(process.call, call)
    except ValueError:  # a line that is not JSON
        raise MetricProcessError("the custom metric process answered out of protocol") from None
    if "not_evaluable" in reply:
        raise NotEvaluable(str(reply["not_evaluable"]))
    if "error" in reply:
        raise MetricProcessError(str(reply["error"]))
    return decode(reply)


def encode(outcome: MetricOutcome) -> JsonObject:
    return {
        "score": outcome.score,
        "status": outcome.status.value,
        "per_invocation": [[p.score, p.status.value] for p in outcome.per_invocation],
        "reason": outcome.reason,
    }


def decode(reply: JsonObject) -> MetricOutcome:
    """Only numbers, statuses and a reason are taken from a process that runs the pull request's code."""

    def number(value: Any) -> float | None:
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int | float) or not in_range(value):
            shown = clip(repr(value), 40)
            raise MetricProcessError(f"the custom metric process answered a score that is not a number: {shown}")
        return float(value)

    try:
        per_invocation = [InvocationScore(number(score), Status(status)) for score, status in reply["per_invocation"]]
        reason = reply.get("reason")
        return MetricOutcome(
            number(reply["score"]), Status(reply["status"]), per_invocation, str(reason) if reason is not None else None
        )
    except (KeyError, TypeError, ValueError):
        raise MetricProcessError("the custom metric process answered out of protocol") from None


def serve() -> None:
    """The metric process: one JSON call per line in, one JSON answer per line out, until its input closes."""
    from adk_eval_gate.core.redaction import redact_standard_streams
    from adk_eval_gate.targets.case_run import one_line

    answers = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)  # what the user's function prints goes to the log, never into the answers
    redact_standard_streams()
    sys.dont_write_bytecode = True
    for line in sys.stdin:
        try:
            reply = encode(asyncio.run(score_call(json.loads(line))))
        except NotEvaluable as exc:
            reply = {"not_evaluable": str(exc)}
        except Exception as exc:
            reply = {"error": one_line(exc)}
        answers.write(json.dumps(reply) + "\n")
        answers.flush()
