"""Results and comparisons built from the real models, shaped for the report.html tests: each case says what it
should look like (scores per run and turn, texts, tool calls), the rest is filled in as a run would."""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field
from typing import Any

from adk_eval_gate.baseline.comparison_format import Comparison
from adk_eval_gate.baseline.stores import LoadedBaseline, LoadOutcome, identity_of
from adk_eval_gate.config.workflow_settings import GateSettings
from adk_eval_gate.gate.comparison_file import build_comparison
from adk_eval_gate.results.build import count
from adk_eval_gate.results.results_format import (
    CaseResult,
    CriterionConfig,
    EvalSetResult,
    GitInfo,
    InvocationResult,
    MetricResult,
    ResultsFile,
    RunMetric,
    RunRange,
    RunRecord,
    RunUsage,
    Sampling,
    Timings,
    ToolInfo,
)

TRAJECTORY = "tool_trajectory_avg_score"
RESPONSE = "response_match_score"
JUDGED = "final_response_match_v2"


def invocation(user: str, response: str, calls: list[tuple[str, Any]]) -> dict[str, Any]:
    """One turn in ADK's Invocation JSON."""
    return {
        "invocation_id": "i",
        "user_content": {"role": "user", "parts": [{"text": user}]},
        "final_response": {"role": "model", "parts": [{"text": response}]},
        "intermediate_data": {
            "tool_uses": [{"name": n, "args": a} for n, a in calls],
            "intermediate_responses": [],
        },
    }


@dataclass
class Case:
    eval_id: str
    # criterion -> per run -> per turn scores; a run is None when its agent errored
    scores: dict[str, list[list[float] | None]]
    user: str = "Roll a 12 sided die"
    responses: list[str] = field(default_factory=lambda: ["I rolled a 12 sided die and got 8."])
    calls: list[tuple[str, Any]] = field(default_factory=lambda: [("roll_die", {"sides": 12})])
    details: str | None = None  # a judge's votes on every turn
    first_round_runs: int | None = None  # adaptive runs
    status: str | None = None  # forced, e.g. not_run
    reason: str | None = None


THRESHOLDS = {TRAJECTORY: 1.0, RESPONSE: 0.8, JUDGED: 0.5}


def _metric(name: str, runs: list[list[float] | None]) -> MetricResult:
    threshold = THRESHOLDS[name]
    run_metrics = []
    for i, turns in enumerate(runs):
        if turns is None:
            run_metrics.append(None)
            continue
        score = statistics.fmean(turns)
        run_metrics.append(
            RunMetric(
                run=i,
                score=score,
                status="passed" if score >= threshold else "failed",
                per_invocation=[
                    InvocationResult(score=s, status="passed" if s >= threshold else "failed") for s in turns
                ],
            )
        )
    pooled = [s for turns in runs if turns for s in turns]
    score = statistics.mean(pooled) if pooled else None
    per_turn = [statistics.fmean(t) for t in zip(*[r for r in runs if r], strict=False)]
    return MetricResult(
        score=score,
        threshold=threshold,
        status="error" if score is None else "passed" if score >= threshold else "failed",
        per_invocation=per_turn,
        runs=run_metrics,
        reason=None if pooled else "every run errored",
    )


def case_result(spec: Case) -> CaseResult:
    metrics = {name: _metric(name, runs) for name, runs in spec.scores.items()}
    if spec.details:
        for metric in metrics.values():
            for run in metric.runs:
                for item in run.per_invocation if run else []:
                    item.detail = spec.details
    runs_count = max(len(r) for r in spec.scores.values())
    runs = []
    for i in range(runs_count):
        errored = all(r[i] is None for r in spec.scores.values())
        turns = [invocation(spec.user, response, spec.calls) for response in spec.responses]
        runs.append(
            RunRecord(
                run=i,
                error="the agent raised TimeoutError" if errored else None,
                duration_seconds=0.5 + i / 10,
                usage=None
                if errored
                else RunUsage(
                    input_tokens=100 + i,
                    output_tokens=20,
                    model_calls=2,
                    tool_calls=1,
                    latency_seconds=0.5,
                    cost_usd=0.00125,
                ),
                actual_invocations=None if errored else turns,
            )
        )
    statuses = {m.status for m in metrics.values()}
    status = spec.status or ("error" if "error" in statuses else "failed" if "failed" in statuses else "passed")
    reason = spec.reason or (
        "; ".join(f"{n} {m.score:.3g} < {m.threshold:g}" for n, m in metrics.items() if m.status == "failed") or None
    )
    sampling = (
        Sampling(first_round_runs=spec.first_round_runs, decided="no worse than the baseline")
        if spec.first_round_runs
        else None
    )
    return CaseResult(
        eval_id=spec.eval_id,
        case_hash="h-" + spec.eval_id,
        status=status,
        reason=reason,
        metrics=metrics,
        runs=runs,
        sampling=sampling,
    )


def results_file(
    sets: dict[tuple[str, str], list[Case]],
    *,
    adaptive: tuple[int, int] | None = None,
    sha: str = "c0ffee" * 6 + "abcd",
) -> ResultsFile:
    eval_sets = []
    for (agent, set_id), specs in sets.items():
        cases = [case_result(s) for s in specs]
        names = list(dict.fromkeys(n for s in specs for n in s.scores))
        runs = max(len(r) for s in specs for r in s.scores.values())
        eval_sets.append(
            EvalSetResult(
                agent=agent,
                eval_set_id=set_id,
                file=f"evals/{set_id}.evalset.json",
                shape="evalset",
                criteria_source="inline",
                num_runs=runs,
                target="replay",
                adaptive_runs=RunRange(min=adaptive[0], max=adaptive[1]) if adaptive else None,
                criteria={n: CriterionConfig(threshold=THRESHOLDS[n], options={}, hash="h-" + n) for n in names},
                summary=count(c.status for c in cases),
                cases=cases,
            )
        )
    return ResultsFile(
        tool=ToolInfo(version="0.2.0", adk_semantics="google-adk 2.13"),
        git=GitInfo(sha=sha, ref="refs/pull/7/merge"),
        config_file="eval-gate.yml",
        timings=Timings(
            started_at="2026-01-02T03:04:05+00:00",
            finished_at="2026-01-02T03:05:05+00:00",
            duration_seconds=60.0,
            inference_seconds=50.0,
            scoring_seconds=10.0,
        ),
        summary=count(c.status for s in eval_sets for c in s.cases),
        eval_sets=eval_sets,
    )


def compared(current: ResultsFile, baseline: ResultsFile, **gate: Any) -> Comparison:
    return build_comparison(
        current,
        LoadOutcome(LoadedBaseline(baseline, identity_of(baseline, "baseline.json"))),
        GateSettings(**gate),
    )
