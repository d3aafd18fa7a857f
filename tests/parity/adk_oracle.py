"""google-adk 2.13.0's own evaluators (installed by the dev extra), called directly as the parity oracle."""

from __future__ import annotations

import json
from typing import Any

from google.adk.evaluation.eval_case import Invocation as AdkInvocation
from google.adk.evaluation.eval_metrics import EvalMetric, ToolTrajectoryCriterion
from google.adk.evaluation.final_response_match_v1 import RougeEvaluator, _UnicodeAwareTokenizer
from google.adk.evaluation.trajectory_evaluator import TrajectoryEvaluator


def adk_invocations(data: list[dict[str, Any]]) -> list[AdkInvocation]:
    return [AdkInvocation.model_validate_json(json.dumps(item)) for item in data]


def adk_trajectory(actual, expected, match_type: str, ignore_args: bool, threshold: float = 1.0):
    criterion = ToolTrajectoryCriterion(threshold=threshold, match_type=match_type, ignore_args=ignore_args)
    evaluator = TrajectoryEvaluator(
        eval_metric=EvalMetric(metric_name="tool_trajectory_avg_score", threshold=threshold, criterion=criterion)
    )
    return evaluator.evaluate_invocations(adk_invocations(actual), adk_invocations(expected))


def adk_rouge(actual, expected, threshold: float = 0.8):
    evaluator = RougeEvaluator(EvalMetric(metric_name="response_match_score", threshold=threshold))
    return evaluator.evaluate_invocations(adk_invocations(actual), adk_invocations(expected))


ADK_TOKENIZER = _UnicodeAwareTokenizer(use_stemmer=True)
