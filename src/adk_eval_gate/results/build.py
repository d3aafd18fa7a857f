"""Builds the results file from scored cases."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from .. import __version__
from ..criteria import efficiency
from ..criteria.base import ConfiguredCriterion, MetricOutcome
from ..criteria.scoring import CaseScore
from ..evalsets.models import EvalCase, dump_invocation
from ..files import load_json, write_text_atomic
from ..targets.base import CaseRun
from ..validation import input_error_from
from .models import (
    CaseResult,
    Counts,
    CriterionConfig,
    EfficiencyResult,
    GitInfo,
    InvocationResult,
    MetricResult,
    ResultsFile,
    RunMetric,
    RunRecord,
    ToolInfo,
)

ADK_SEMANTICS = "google-adk 2.13"


def _run_metric(run: int, outcome: MetricOutcome | None) -> RunMetric | None:
    if outcome is None:
        return None
    return RunMetric(
        run=run,
        score=outcome.score,
        status=outcome.status.value,
        per_invocation=[InvocationResult(score=i.score, status=i.status.value, detail=i.detail) for i in outcome.per_invocation],
        reason=outcome.reason,
        cause=outcome.cause.value if outcome.cause else None,
    )


def case_result(case: EvalCase, score: CaseScore, runs: Sequence[CaseRun]) -> CaseResult:
    metrics = {
        c.name: MetricResult(
            score=c.score,
            threshold=c.threshold,
            status=c.status.value,
            per_invocation=c.pooled_per_invocation(),
            runs=[_run_metric(i, o) for i, o in enumerate(c.runs)],
            reason=c.reason,
            cause=c.cause.value if c.cause else None,
        )
        for c in score.criteria
    }
    records = [
        RunRecord(
            run=r.run,
            error=r.error,
            duration_seconds=round(r.duration_seconds, 6),
            actual_invocations=[dump_invocation(i) for i in r.invocations] if r.invocations is not None else None,
        )
        for r in runs
    ]
    return CaseResult(eval_id=score.eval_id, case_hash=case_hash(case), status=score.status.value, reason=score.reason,
                      metrics=metrics, efficiency=efficiency_results(runs), runs=records)


def efficiency_results(runs: Sequence[CaseRun]) -> dict[str, EfficiencyResult]:
    done = [list(r.invocations) for r in runs if r.ok and r.invocations is not None]
    if not done:
        return {}
    values = {name: efficiency.case_value(name, done) for name in efficiency.NAMES}
    return {name: EfficiencyResult(score=v.score, per_invocation=v.per_invocation) for name, v in values.items()}


def content_hash(data: Any) -> str:
    return hashlib.sha256(json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()).hexdigest()


def case_hash(case: EvalCase) -> str:
    """What the case asks and expects, not when or under which ids it was written down."""
    data = case.model_dump(mode="json", exclude_none=True, exclude={"creation_timestamp"})
    for invocation in data.get("conversation") or []:
        invocation.pop("invocation_id", None)
        invocation.pop("creation_timestamp", None)
    return content_hash(data)


def criteria_config(criteria: Iterable[ConfiguredCriterion]) -> dict[str, CriterionConfig]:
    return {
        c.name: CriterionConfig(threshold=c.threshold, options=c.options_json(),
                                hash=content_hash({"name": c.name, "options": c.options_json()}))
        for c in criteria
    }


def count(statuses: Iterable[str]) -> Counts:
    counts = Counts()
    for status in statuses:
        counts.total += 1
        setattr(counts, status, getattr(counts, status) + 1)
    return counts


def git_info(directory: Path) -> GitInfo:
    sha = os.environ.get("GITHUB_SHA")
    ref = os.environ.get("GITHUB_REF")
    if sha is None:
        try:
            sha = subprocess.run(["git", "rev-parse", "HEAD"], cwd=directory, capture_output=True, text=True,
                                 timeout=10, check=True).stdout.strip() or None
        except (OSError, subprocess.SubprocessError):
            sha = None
    return GitInfo(sha=sha, ref=ref)


def tool_info() -> ToolInfo:
    return ToolInfo(version=__version__, adk_semantics=ADK_SEMANTICS)


def write_results(results: ResultsFile, path: Path) -> None:
    write_text_atomic(path, results.model_dump_json(indent=2) + "\n")


def read_results(path: Path) -> ResultsFile:
    data = load_json(path, "results file")
    try:
        return ResultsFile.model_validate(data)
    except ValidationError as exc:
        raise input_error_from(exc, path, model=ResultsFile) from None
