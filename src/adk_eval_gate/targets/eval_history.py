"""Our results as ADK eval history (`<agent folder>/.adk/eval_history/*.evalset_result.json`), so `adk web` lists
runs of the `adk` target beside its own.

Written by google-adk's own `LocalEvalSetResultsManager` from google-adk's own result models, so file names, the
schema and the JSON are exactly what `adk eval` writes. As ADK stores `AgentEvaluator` runs, every run of a case
is one `EvalCaseResult` (num_runs x cases entries); a run whose agent errored is FAILED with no metric results,
as ADK records a failed inference.
"""

from __future__ import annotations

import sys
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from ..evalsets.models import EvalCase
from ..results.models import CaseResult, EvalSetResult, RunMetric

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


@dataclass(frozen=True)
class Ref:
    """Stands for invocations the history writer already holds as ADK objects (`prevalidate`): `key` names the
    list, `index` the invocation in it."""

    key: tuple
    index: int


def case_results(
    eval_set: EvalSetResult,
    cases: dict[str, EvalCase],
    *,
    tag: str = "",
    held: set[tuple] | frozenset = frozenset(),
) -> list[dict[str, Any]]:
    """ADK `EvalCaseResult`s, in their JSON form, for every run of every case of one eval set. Built as plain
    data and validated by ADK's models in one pass (`save_history`): object by object, this cost more than
    running the agent on some suites. Invocations the writer holds already (`held`, keys under `tag`) are
    `Ref`s."""

    def metric_result(name: str, score: float | None, status: str) -> dict[str, Any]:
        criterion = eval_set.criteria[name]
        return {
            "metric_name": name,
            "threshold": criterion.threshold,
            "criterion": criterion.options,
            "score": score,
            "eval_status": _STATUS[status],
        }

    out = []
    for case in eval_set.cases:
        source = cases.get(case.eval_id)
        expected_key = ("expected", tag, eval_set.eval_set_id, case.eval_id)
        if expected_key in held:
            expected = [Ref(expected_key, i) for i in range(len(source.conversation or []))] if source else []
        else:
            expected = (
                [i.model_dump(mode="json", exclude_none=True) for i in (source.conversation or [])]
                if source
                else []
            )
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


def _actual(record: Any, key: tuple, held: set[tuple] | frozenset) -> list[Any]:
    return (
        [Ref(key, i) for i in range(len(record.actual_invocations))]
        if key in held
        else record.actual_invocations
    )


def _per_run(case: CaseResult, run: int) -> dict[str, RunMetric]:
    return {
        name: m
        for name, metric in case.metrics.items()
        for m in metric.runs
        if m is not None and m.run == run
    }


def save_history(manager: Any, app_name: str, eval_set: EvalSetResult, cases: dict[str, EvalCase]) -> None:
    """Through any ADK `EvalSetResultsManager` (local, GCS, or the one an AgentEvaluator caller passes)."""
    save_case_results(manager, app_name, eval_set.eval_set_id, case_results(eval_set, cases))


def save_case_results(
    manager: Any,
    app_name: str,
    eval_set_id: str,
    results: list[dict[str, Any]],
    held: dict[tuple, list] | None = None,
) -> None:
    """ADK's manager writes the file itself, past our redacting writers: secrets the agent echoed are masked
    here first (held invocations were masked when `prevalidate` took them)."""
    from ..redaction import redact_json, secret_values

    if secrets := secret_values():
        results = redact_json(results, secrets)
    for case in results:
        for item in case["eval_metric_result_per_invocation"]:
            for field in ("actual_invocation", "expected_invocation"):
                if isinstance(ref := item.get(field), Ref):
                    item[field] = (held or {})[ref.key][ref.index]
    manager.save_eval_set_result(app_name, eval_set_id, case_results_adapter().validate_python(results))


def prevalidate(invocations: list[dict[str, Any]]) -> list[Any]:
    """ADK Invocations from their JSON, secrets masked: done while the agent runs, so the history costs little
    at the end."""
    from ..redaction import redact_json

    return invocations_adapter().validate_python(redact_json(invocations))


@cache
def invocations_adapter() -> Any:
    from google.adk.evaluation.eval_case import Invocation
    from pydantic import TypeAdapter

    return TypeAdapter(list[Invocation])


@cache
def case_results_adapter() -> Any:
    """Validates a list of ADK EvalCaseResults; building it imports and prepares ADK's result models, which the
    agent host does ahead of time, while the workers run."""
    from google.adk.evaluation.eval_result import EvalCaseResult
    from google.adk.evaluation.local_eval_set_results_manager import LocalEvalSetResultsManager  # noqa: F401
    from pydantic import TypeAdapter

    return TypeAdapter(list[EvalCaseResult])


def write_history_or_warn(
    agent: str,
    folder: Path,
    eval_set_id: str,
    results: list[dict[str, Any]],
    held: dict[tuple, list] | None = None,
) -> None:
    """Saves one eval set's `case_results` where `adk web` looks for the agent folder's history; a history that
    cannot be written is a warning, never a lost run."""
    try:
        from google.adk.evaluation.local_eval_set_results_manager import LocalEvalSetResultsManager

        manager = LocalEvalSetResultsManager(agents_dir=str(folder.parent))
        save_case_results(manager, folder.name, eval_set_id, results, held)
    except Exception as exc:  # a read-only checkout, an id ADK refuses as a file name, ...
        print(f"warning: ADK eval history for {agent}/{eval_set_id} not written: {exc}", file=sys.stderr)


def history_folder(agent: Any, base_dir: Path) -> Path | None:
    """The agent folder whose `.adk/eval_history` `adk web` reads, when this agent's results belong there."""
    target = agent.settings.target
    if target.kind != "adk" or not target.eval_history:
        return None
    folder = Path(target.agent)
    folder = folder if folder.is_absolute() else base_dir / folder
    return folder if folder.is_dir() else None  # a module:attribute agent has no folder for adk web to list
