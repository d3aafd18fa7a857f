"""Builds the results file from scored cases."""

from __future__ import annotations

import hashlib
import json
import math
import os
import subprocess
import uuid
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from pydantic import ValidationError
from pydantic_core import PydanticSerializationError

from adk_eval_gate.core.errors import InputError
from adk_eval_gate.core.files import load_json, scrub_data, write_text_atomic
from adk_eval_gate.core.numbers import in_range, out_of_range
from adk_eval_gate.core.validation import input_error_from
from adk_eval_gate.core.version import __version__
from adk_eval_gate.criteria import efficiency_metrics as efficiency
from adk_eval_gate.criteria.engine.criterion import MetricOutcome, SomeCriterion
from adk_eval_gate.criteria.engine.scoring import CaseScore
from adk_eval_gate.evalsets.adk_eval_schema import EvalCase, dump_invocation
from adk_eval_gate.results.agents_cli_results import is_agents_cli_result, results_from_agents_cli
from adk_eval_gate.results.judge_noise import judge_noise
from adk_eval_gate.results.results_format import (
    SCHEMA_VERSION,
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
from adk_eval_gate.targets.case_run import CaseRun

ADK_SEMANTICS = "google-adk 2.13"


def _run_metric(run: int, outcome: MetricOutcome | None) -> RunMetric | None:
    if outcome is None:
        return None
    return RunMetric(
        run=run,
        score=outcome.score,
        status=outcome.status.value,
        per_invocation=[
            InvocationResult(
                score=i.score,
                status=i.status.value,
                detail=i.detail,
                judgements=list(i.judgements) if i.judgements else None,
                rejudged=i.rejudged,
                unjudged=i.unjudged,
            )
            for i in outcome.per_invocation
        ],
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
            judge_noise=judge_noise(c.runs),
        )
        for c in score.criteria
    }
    records = [
        RunRecord(
            run=r.run,
            error=r.error,
            duration_seconds=round(r.duration_seconds, 6),
            actual_invocations=(list(r.dumped) if r.dumped is not None else [dump_invocation(i) for i in r.invocations])
            if r.invocations is not None
            else None,
        )
        for r in runs
    ]
    return CaseResult(
        eval_id=score.eval_id,
        case_hash=case_hash(case),
        status=score.status.value,
        reason=score.reason,
        metrics=metrics,
        efficiency=efficiency_results(runs),
        runs=records,
    )


def efficiency_results(runs: Sequence[CaseRun]) -> dict[str, EfficiencyResult]:
    done = [list(r.invocations) for r in runs if r.ok and r.invocations is not None]
    if not done:
        return {}
    values = {name: efficiency.case_value(name, done) for name in efficiency.NAMES}
    return {name: EfficiencyResult(score=v.score, per_invocation=v.per_invocation) for name, v in values.items()}


def content_hash(data: object) -> str:
    return hashlib.sha256(
        json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()
    ).hexdigest()


def case_hash(case: EvalCase) -> str:
    """What the case asks and expects, not when or under which ids it was written down."""
    data = case.model_dump(mode="json", exclude_none=True, exclude={"creation_timestamp"})
    for invocation in data.get("conversation") or []:
        invocation.pop("invocation_id", None)
        invocation.pop("creation_timestamp", None)
    return content_hash(data)


def criteria_config(criteria: Iterable[SomeCriterion]) -> dict[str, CriterionConfig]:
    return {
        c.name: CriterionConfig(
            threshold=c.threshold,
            options=c.options_json(),
            hash=content_hash({"name": c.name, "options": c.options_json()}),
        )
        for c in criteria
    }


def count(statuses: Iterable[str]) -> Counts:
    counts = Counts()
    for status in statuses:
        counts.total += 1
        setattr(counts, status, getattr(counts, status) + 1)
    return counts


def new_run_id(environ: Mapping[str, str] = os.environ) -> str:
    """A fresh run's id (ResultsFile.run_id): in GitHub Actions, led by the workflow run and its attempt, which
    the shards of one run share (`merge` takes no other); elsewhere `local`."""
    run, attempt = environ.get("GITHUB_RUN_ID", ""), environ.get("GITHUB_RUN_ATTEMPT", "") or "1"
    workflow_run = f"{run}.{attempt}" if run.isdigit() and attempt.isdigit() else "local"
    return f"{workflow_run}.{uuid.uuid4().hex[:16]}"


def workflow_run_of(run_id: str | None) -> str | None:
    """The workflow run a run id names (`local` outside Actions), or None for results written before run ids."""
    return run_id.rsplit(".", 1)[0] if run_id and "." in run_id else None


def git_info(directory: Path) -> GitInfo:
    sha = os.environ.get("GITHUB_SHA")
    ref = os.environ.get("GITHUB_REF")
    if sha is None:
        try:
            sha = (
                subprocess.run(
                    ["git", "rev-parse", "HEAD"], cwd=directory, capture_output=True, text=True, timeout=10, check=True
                ).stdout.strip()
                or None
            )
        except (OSError, subprocess.SubprocessError):
            sha = None
    return GitInfo(sha=sha, ref=ref)


def tool_info() -> ToolInfo:
    return ToolInfo(version=__version__, adk_semantics=ADK_SEMANTICS)


def write_results(results: ResultsFile, path: Path) -> None:
    try:
        text = results.model_dump_json(indent=2)
    except PydanticSerializationError:
        # An agent's text with a lone surrogate (e.g. "\\ud800" in a server's JSON) must not cost the run's results:
        # it becomes U+FFFD.
        text = json.dumps(scrub_data(results.model_dump(mode="json")), indent=2, ensure_ascii=False)
    write_text_atomic(path, text + "\n")


def read_results(path: Path, what: str = "results file") -> ResultsFile:
    """A results file may come from another job, another version or a fork: nothing in it is taken on trust."""
    data = load_json(path, what)
    if not isinstance(data, dict):
        raise InputError(
            path,
            None,
            f"{what} is a JSON {type(data).__name__}, not an object",
            "pass a results.json written by adk-eval-gate",
        )
    if is_agents_cli_result(data):  # agents-cli's own results_<timestamp>.json
        results = results_from_agents_cli(data, path, tool_info().version)
        _check_results(results, path)
        return results
    if "schema_version" not in data:
        raise InputError(path, "schema_version", "is missing", "pass a results.json written by adk-eval-gate")
    if data["schema_version"] != SCHEMA_VERSION or isinstance(data["schema_version"], bool):
        raise InputError(
            path,
            "schema_version",
            f"{data['schema_version']!r} is not a version this tool reads ({SCHEMA_VERSION})",
            "write the file with a matching adk-eval-gate, or upgrade it",
        )
    try:
        results = ResultsFile.model_validate(data)
    except ValidationError as exc:
        raise input_error_from(exc, path, model=ResultsFile) from None
    except RecursionError:
        raise InputError(
            path, None, f"{what} is nested too deeply", "pass a results.json written by adk-eval-gate"
        ) from None
    _check_results(results, path)
    return results


def _check_results(results: ResultsFile, path: Path) -> None:
    def fail(field: str, problem: str) -> InputError:
        return InputError(path, field, problem, "pass a results.json written by adk-eval-gate, unedited")

    def check_score(value: float | None, field: str, bounded: bool = True) -> None:
        if value is None:
            return
        if bounded and not (math.isfinite(value) and 0.0 <= value <= 1.0):
            raise fail(field, f"score {value!r} is outside [0, 1]")
        if not in_range(value):  # agents-cli's own scale, yet sums and means of it must not overflow
            raise fail(field, f"{out_of_range(value)}")

    for name, value in results.timings.model_dump().items():
        if isinstance(value, float) and not (math.isfinite(value) and value >= 0):
            raise fail(f"timings.{name}", f"{value!r} is not a duration")
    sets: dict[tuple[str, str], int] = {}
    for i, eval_set in enumerate(results.eval_sets):
        key = (eval_set.agent, eval_set.eval_set_id)
        if key in sets:
            raise fail(f"eval_sets[{i}]", f"{key[0]}/{key[1]} is also eval_sets[{sets[key]}]")
        sets[key] = i
        if eval_set.num_runs < 1:
            raise fail(f"eval_sets[{i}].num_runs", f"{eval_set.num_runs} is not a run count")
        # agents-cli metrics score on their own scale (a 1-5 judge, a word count); ADK's criteria on [0, 1]
        bounded = eval_set.shape != "agents_cli"
        for name, criterion in eval_set.criteria.items():
            check_score(criterion.threshold, f"eval_sets[{i}].criteria.{name}.threshold", bounded)
        cases: dict[str, int] = {}
        for j, case in enumerate(eval_set.cases):
            where = f"eval_sets[{i}].cases[{j}]"
            if case.eval_id in cases:
                raise fail(f"{where}.eval_id", f"duplicate {case.eval_id!r} (also cases[{cases[case.eval_id]}])")
            cases[case.eval_id] = j
            for name, metric in case.metrics.items():
                at = f"{where}.metrics.{name}"
                check_score(metric.score, f"{at}.score", bounded)
                check_score(metric.threshold, f"{at}.threshold", bounded)
                for k, value in enumerate(metric.per_invocation):
                    check_score(value, f"{at}.per_invocation[{k}]", bounded)
                for k, run in enumerate(metric.runs):
                    if run is not None:
                        check_score(run.score, f"{at}.runs[{k}].score", bounded)
                        for m, turn in enumerate(run.per_invocation):
                            check_score(turn.score, f"{at}.runs[{k}].per_invocation[{m}].score", bounded)
            for k, record in enumerate(case.runs):
                seconds = record.duration_seconds
                if seconds is not None and not (math.isfinite(seconds) and seconds >= 0):
                    raise fail(f"{where}.runs[{k}].duration_seconds", f"{seconds!r} is not a duration")
