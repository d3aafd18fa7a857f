"""Our results as ADK eval history (`<agent folder>/.adk/eval_history/*.evalset_result.json`), so `adk web` lists
runs of the `adk` target beside its own.

Written by google-adk's own `LocalEvalSetResultsManager` from google-adk's own result models, so file names, the
schema and the JSON are exactly what `adk eval` writes. As ADK stores `AgentEvaluator` runs, every run of a case
is one `EvalCaseResult` (num_runs x cases entries); a run whose agent errored is FAILED with no metric results,
as ADK records a failed inference.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from collections.abc import Set as AbstractSet

from adk_eval_gate.core.json_types import JsonObject
from adk_eval_gate.evalsets.adk_eval_schema import EvalCase
from adk_eval_gate.results.results_format import CaseResult, EvalSetResult, RunMetric, RunRecord
from adk_eval_gate.targets.adk_history import HeldKey, Ref, save_case_results

_STATUS = {"passed": 1, "failed": 2, "not_evaluated": 3, "error": 2}  # ADK's EvalStatus values


def _run_status(metrics: Sequence[RunMetric]) -> int:
    """ADK's `_generate_final_eval_status`: any failure fails, else any pass passes, else not evaluated."""
    status = 3
    for metric in metrics:
        if metric.status == "failed":
            return 2
        if metric.status == "passed":
            status = 1
    return status


def case_results(
    eval_set: EvalSetResult,
    cases: dict[str, EvalCase],
    *,
    tag: str = "",
    held: AbstractSet[HeldKey] = frozenset(),
) -> list[JsonObject]:
    """ADK `EvalCaseResult`s, in their JSON form, for every run of every case of one eval set. Built as plain
    data and validated by ADK's models in one pass (`save_history`): object by object, this cost more than
    running the agent on some suites. Invocations the writer holds already (`held`, keys under `tag`) are
    `Ref`s."""

    def metric_result(name: str, score: float | None, status: str) -> JsonObject:
        return _metric_result(eval_set, name, score, status)

    out = []
    for case in eval_set.cases:
        source = cases.get(case.eval_id)
        expected_key = ("expected", tag, eval_set.eval_set_id, case.eval_id)
        expected = _expected(source, expected_key, held)
        user_id = source.session_input.user_id if source and source.session_input else "test_user_id"
        for record in case.runs:
            per_run = _per_run(case, record.run)
            if record.error or record.actual_invocations is None:
                status, overall, per_invocation = 2, [], []
            else:
                status = _run_status(list(per_run.values()))
                overall = [metric_result(n, m.score, m.status) for n, m in per_run.items()]
                per_invocation = [
                    {
                        "actual_invocation": actual,  # already ADK's Invocation JSON (dump_invocation)
                        "expected_invocation": expected[i] if i < len(expected) else None,
                        "eval_metric_results": [
                            metric_result(n, m.per_invocation[i].score, m.per_invocation[i].status)
                            for n, m in per_run.items()
                            if i < len(m.per_invocation)
                        ],
                    }
                    for i, actual in enumerate(
                        _actual(record, ("actual", tag, eval_set.eval_set_id, case.eval_id, record.run), held)
                    )
                ]
            out.append(
                {
                    "eval_set_file": eval_set.eval_set_id,
                    "eval_set_id": eval_set.eval_set_id,
                    "eval_id": case.eval_id,
                    "final_eval_status": status,
                    "overall_eval_metric_results": overall,
                    "eval_metric_result_per_invocation": per_invocation,
                    "session_id": f"adk-eval-gate-{uuid.uuid4()}",
                    "user_id": user_id,
                }
            )
    return out


def _metric_result(eval_set: EvalSetResult, name: str, score: float | None, status: str) -> JsonObject:
    criterion = eval_set.criteria[name]
    return {
        "metric_name": name,
        "threshold": criterion.threshold,
        "criterion": criterion.options,
        "score": score,
        "eval_status": _STATUS[status],
    }


def _expected(
    source: EvalCase | None, expected_key: HeldKey, held: AbstractSet[HeldKey]
) -> list[Ref] | list[JsonObject]:
    """A case's expected turns: `Ref`s when the writer holds them already, else ADK's Invocation JSON."""
    if expected_key in held:
        return [Ref(expected_key, i) for i in range(len(source.conversation or []))] if source else []
    return [i.model_dump(mode="json", exclude_none=True) for i in (source.conversation or [])] if source else []


def _actual(record: RunRecord, key: HeldKey, held: AbstractSet[HeldKey]) -> list[Ref] | list[JsonObject]:
    recorded = record.actual_invocations or []  # a run without invocations is written as a failed run first
    return [Ref(key, i) for i in range(len(recorded))] if key in held else recorded


def _per_run(case: CaseResult, run: int) -> dict[str, RunMetric]:
    return {name: m for name, metric in case.metrics.items() for m in metric.runs if m is not None and m.run == run}


def save_history(manager: object, app_name: str, eval_set: EvalSetResult, cases: dict[str, EvalCase]) -> None:
    """Through any ADK `EvalSetResultsManager` (local, GCS, or the one an AgentEvaluator caller passes)."""
    save_case_results(manager, app_name, eval_set.eval_set_id, case_results(eval_set, cases))
