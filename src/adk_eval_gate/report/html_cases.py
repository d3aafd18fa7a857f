"""The cases of report.html: each case's scores, comparison rows, tags for the filters, and the turns of every
run and of the eval set, reduced to what the page shows (user text, response, tool calls)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from ..baseline.models import Row
from ..evalsets.models import Invocation, content_text, tool_calls
from ..results.models import CaseResult, EvalSetResult

TEXT_LIMIT = 4000


def _clip(text: str) -> str:
    if len(text) <= TEXT_LIMIT:
        return text
    return f"{text[:TEXT_LIMIT]}\n… ({len(text) - TEXT_LIMIT} more characters in results.json)"


def _turn(invocation: Invocation) -> dict[str, Any]:
    return {
        "user": _clip(content_text(invocation.user_content)),
        "response": _clip(content_text(invocation.final_response)),
        "tools": [
            {"name": call.name or "", "args": call.args} for call in tool_calls(invocation.intermediate_data)
        ],
    }


def _turns(raw: Iterable[Mapping[str, Any]] | None) -> list[dict[str, Any]] | None:
    if raw is None:
        return None
    turns = []
    for item in raw:
        try:
            turns.append(_turn(Invocation.model_validate(item)))
        except ValueError:  # a recording this version cannot read: the page still shows everything else
            turns.append(
                {"user": "", "response": "(this turn could not be read; see results.json)", "tools": []}
            )
    return turns


def _tags(case: CaseResult, compared: Mapping[str, Row]) -> list[str]:
    tags = []
    if any(r.verdict == "regressed" for r in compared.values()):
        tags.append("regressed")
    if case.status == "failed":
        tags.append("failed")
    outcomes = {run.status for m in case.metrics.values() for run in m.runs if run is not None}
    if len(case.runs) > 1 and {"passed", "failed"} <= outcomes:
        tags.append("flaky")  # the same case passed in one run and failed in another
    if any(
        r.verdict in ("regressed", "improved", "inconclusive", "new", "not_comparable")
        or (r.delta or 0.0) != 0.0
        for r in compared.values()
    ):
        tags.append("changed")
    if case.status == "error":
        tags.append("error")
    if case.status == "not_run":
        tags.append("not_run")
    return tags


def case_data(
    eval_set: EvalSetResult, case: CaseResult, compared: Mapping[str, Row], expected: list[Invocation] | None
) -> dict[str, Any]:
    metrics = {
        name: {
            "score": m.score,
            "threshold": m.threshold,
            "status": m.status,
            "reason": m.reason,
            "cause": m.cause,
            "runs": [
                None
                if r is None
                else {
                    "run": r.run,
                    "score": r.score,
                    "status": r.status,
                    "reason": r.reason,
                    "turns": [[i.score, i.status, i.detail] for i in r.per_invocation],
                }
                for r in m.runs
            ],
        }
        for name, m in case.metrics.items()
    }
    return {
        "key": f"{eval_set.agent}/{eval_set.eval_set_id}/{case.eval_id}",
        "agent": eval_set.agent,
        "eval_set_id": eval_set.eval_set_id,
        "eval_id": case.eval_id,
        "status": case.status,
        "reason": case.reason,
        "tags": _tags(case, compared),
        "metrics": metrics,
        "compared": {
            name: {
                "baseline": r.baseline,
                "current": r.current,
                "delta": r.delta,
                "estimate": r.estimate,
                "verdict": r.verdict,
                "reason": r.reason,
                "p_value": r.p_value,
                "gating": r.gating,
            }
            for name, r in compared.items()
        },
        "expected": None if expected is None else [_turn(i) for i in expected],
        "runs": [
            {
                "run": r.run,
                "error": r.error,
                "duration_seconds": r.duration_seconds,
                "usage": r.usage.model_dump(mode="json") if r.usage else None,
                "turns": _turns(r.actual_invocations),
            }
            for r in case.runs
        ],
        "sampling": case.sampling.model_dump(mode="json") if case.sampling else None,
    }
