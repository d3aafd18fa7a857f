"""agents-cli's own results (`results_<timestamp>.json` from `agents-cli eval run` / `eval grade`, the SDK's
EvaluationResult) read as a results file of ours, so they can be compared, gated and stored as a baseline.

* One eval set: agent `agent_info.name` (else `agents-cli`), id `metadata.dataset_name` (else `dataset`).
* A case per `eval_case_results[]`: its id from the graded dataset (`evaluation_dataset[0].eval_cases[i]`, else
  `metadata.dataset[i]`), else `case_<index>` as our reader names an unnamed dataset case; `eval_case_index` is a
  position, so a file without ids is only comparable with itself run on the same dataset.
* Each response candidate is a run; each metric result a criterion. A score passes (agents-cli has no
  thresholds); an `error_message`, or no score, is an error, so it gates as our own errors do.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from adk_eval_gate.core.errors import InputError
from adk_eval_gate.core.json_types import JsonObject
from adk_eval_gate.core.numbers import in_range, out_of_range
from adk_eval_gate.core.validation import input_error_from
from adk_eval_gate.results.results_format import (
    CaseResult,
    CaseStatusName,
    Counts,
    CriterionConfig,
    EvalSetResult,
    GitInfo,
    InvocationResult,
    MetricResult,
    ResultsFile,
    RunMetric,
    RunRecord,
    StatusName,
    Timings,
    ToolInfo,
)

FIX = "pass the results_<timestamp>.json that `agents-cli eval run` or `eval grade` wrote, unedited"


class _Loose(BaseModel):
    model_config = ConfigDict(extra="allow")


class MetricResultIn(_Loose):
    score: float | None = None
    explanation: str | None = None
    error_message: str | None = None


class CandidateIn(_Loose):
    response_index: int | None = None
    metric_results: dict[str, MetricResultIn] | None = None


class CaseResultIn(_Loose):
    eval_case_index: int | None = None
    response_candidate_results: list[CandidateIn] | None = None


class EvaluationResultIn(_Loose):
    eval_case_results: list[CaseResultIn] | None = None
    summary_metrics: list[JsonObject] | None = None
    evaluation_dataset: list[JsonObject] | None = None
    metadata: JsonObject | None = None
    agent_info: JsonObject | None = None


def is_agents_cli_result(data: object) -> bool:
    return isinstance(data, dict) and "schema_version" not in data and "eval_case_results" in data


def _case_ids(result: EvaluationResultIn) -> list[Any]:
    datasets = result.evaluation_dataset or []
    cases = (datasets[0].get("eval_cases") if datasets and isinstance(datasets[0], dict) else None) or []
    rows = (result.metadata or {}).get("dataset") or []
    return [(c.get("eval_case_id") if isinstance(c, dict) else None) for c in cases] or [
        (r.get("eval_case_id") if isinstance(r, dict) else None) for r in rows
    ]


def _metric(name: str, outcomes: list[MetricResultIn | None]) -> MetricResult:
    runs: list[RunMetric | None] = []
    for run, outcome in enumerate(outcomes):
        if outcome is None:
            runs.append(None)
            continue
        error = outcome.error_message
        if error is None and (outcome.score is None or not in_range(outcome.score)):
            error = f"agents-cli recorded score {out_of_range(outcome.score)}"
        status: StatusName = "error" if error else "passed"
        score = None if error else outcome.score
        detail = error or outcome.explanation
        runs.append(
            RunMetric(
                run=run,
                score=score,
                status=status,
                per_invocation=[InvocationResult(score=score, status=status, detail=detail)],
                reason=error,
                cause="internal_error" if error else None,
            )
        )
    scored = [r for r in runs if r is not None]
    failed = next((r for r in scored if r.status == "error"), None)
    values = [r.score for r in scored if r.score is not None]
    if failed is not None or not values:
        reason = failed.reason if failed else "agents-cli recorded no result"
        return MetricResult(
            score=None,
            threshold=0.0,
            status="error",
            per_invocation=[None],
            runs=runs,
            reason=reason,
            cause="internal_error",
        )
    mean = math.fsum(values) / len(values)
    return MetricResult(score=mean, threshold=0.0, status="passed", per_invocation=[mean], runs=runs)


def _case(eval_id: str, result: CaseResultIn) -> CaseResult:
    candidates = result.response_candidate_results or []
    names = list(dict.fromkeys(name for c in candidates for name in (c.metric_results or {})))
    metrics = {name: _metric(name, [(c.metric_results or {}).get(name) for c in candidates]) for name in names}
    errors = [f"{name}: {m.reason}" for name, m in metrics.items() if m.status == "error"]
    status: CaseStatusName = "error" if errors or not metrics else "passed"
    reason = "; ".join(errors) if errors else (None if metrics else "agents-cli recorded no metric for this case")
    runs = [RunRecord(run=index) for index in range(max(1, len(candidates)))]
    return CaseResult(eval_id=eval_id, status=status, reason=reason, metrics=metrics, runs=runs)


def results_from_agents_cli(data: JsonObject, path: Path, version: str) -> ResultsFile:
    try:
        parsed = EvaluationResultIn.model_validate(data)
    except ValidationError as exc:
        raise input_error_from(exc, path, model=EvaluationResultIn) from None
    if not parsed.eval_case_results:
        raise InputError(path, "eval_case_results", "is empty: agents-cli graded no case", FIX)
    ids = _case_ids(parsed)
    cases, seen = [], set()
    for position, result in enumerate(parsed.eval_case_results):
        index = result.eval_case_index if result.eval_case_index is not None else position
        given = ids[index] if 0 <= index < len(ids) else None
        eval_id = given if isinstance(given, str) and given.strip() else f"case_{index}"
        if eval_id in seen:
            raise InputError(path, f"eval_case_results[{position}]", f"case {eval_id!r} is graded twice", FIX)
        seen.add(eval_id)
        cases.append(_case(eval_id, result))
    names = list(dict.fromkeys(name for case in cases for name in case.metrics))
    options = {"threshold": 0.0, "has_threshold": False}
    agent = (parsed.agent_info or {}).get("name") or "agents-cli"
    statuses = [case.status for case in cases]
    eval_set = EvalSetResult(
        agent=str(agent),
        eval_set_id=str((parsed.metadata or {}).get("dataset_name") or "dataset"),
        file=path.name,
        shape="agents_cli",
        criteria_source=path.name,
        criteria={name: CriterionConfig(threshold=0.0, options=options) for name in names},
        num_runs=max(len(case.runs) for case in cases),
        target="agents-cli",
        summary=_count(statuses),
        cases=cases,
    )
    stamp = (parsed.metadata or {}).get("creation_timestamp") or datetime.fromtimestamp(
        path.stat().st_mtime, timezone.utc
    ).isoformat()
    return ResultsFile(
        tool=ToolInfo(version=version, adk_semantics="agents-cli"),
        git=GitInfo(),
        config_file=path.name,
        timings=Timings(
            started_at=str(stamp),
            finished_at=str(stamp),
            duration_seconds=0.0,
            inference_seconds=0.0,
            scoring_seconds=0.0,
        ),
        summary=_count(statuses),
        eval_sets=[eval_set],
    )


def _count(statuses: Sequence[str]) -> Counts:
    return Counts(
        total=len(statuses),
        passed=statuses.count("passed"),
        failed=statuses.count("failed"),
        error=statuses.count("error"),
    )


def named_for(results: ResultsFile, agent: str, eval_set_id: str) -> ResultsFile:
    """agents-cli's results named as the config names the dataset, so they compare with our runs of it and cover
    the suite as a baseline must; any other results file is returned as it is."""
    if len(results.eval_sets) != 1 or results.eval_sets[0].target != "agents-cli":
        return results
    renamed = results.eval_sets[0].model_copy(update={"agent": agent, "eval_set_id": eval_set_id})
    return results.model_copy(update={"eval_sets": [renamed]})
