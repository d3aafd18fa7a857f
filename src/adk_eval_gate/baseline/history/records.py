"""One default-branch run, reduced to a history record; and the history it joins, kept bounded."""

from __future__ import annotations

import statistics
from collections.abc import Sequence

from adk_eval_gate.baseline.compare import samples
from adk_eval_gate.baseline.comparison_format import EfficiencyMetric
from adk_eval_gate.baseline.efficiency_compare import run_values
from adk_eval_gate.baseline.history.provenance_marks import record_provenance
from adk_eval_gate.baseline.history.record_format import (
    HASH_LENGTH,
    CaseRecord,
    CriterionRecord,
    EvalSetRecord,
    History,
    HistoryRecord,
)
from adk_eval_gate.baseline.pass_k import run_tally
from adk_eval_gate.results.flakiness import run_outcomes
from adk_eval_gate.results.results_format import CaseResult, EvalSetResult, MetricResult, ResultsFile

DIGITS = 6  # means are rounded: the record stays compact and no comparison needs more


def passes(values: Sequence[float], threshold: float) -> int:
    """Samples at or above the threshold: ADK's own rule for a score's status."""
    return sum(v >= threshold for v in values)


def _case_score(metric: MetricResult) -> tuple[float, int, int] | None:
    values = samples(metric)
    if not values:
        return None
    return round(statistics.fmean(values), DIGITS), passes(values, metric.threshold), len(values)


def _run_outcomes(case: CaseResult) -> dict[str, tuple[int, int]]:
    """Each run's outcome per criterion, kept only where the sample counts do not already say it: with one turn a
    run, [passes, samples] is [runs passed, runs], and most cases then add nothing to the record."""
    kept = {}
    for name, metric in case.metrics.items():
        score = _case_score(metric)
        if (outcomes := run_outcomes(metric)) != ((score[1], score[2]) if score else (0, 0)):
            kept[name] = outcomes
    return kept


def _mean_of(values: list[float]) -> float | None:
    return round(statistics.fmean(values), DIGITS) if values else None


def _per_run(cases: Sequence[CaseResult], metric: EfficiencyMetric) -> float | None:
    values = [v for case in cases for v in run_values(case, metric)]
    return round(statistics.fmean(values), DIGITS) if values else None


def _eval_set_record(eval_set: EvalSetResult) -> EvalSetRecord:
    scored = [c for c in eval_set.cases if c.status not in ("error", "not_run")]
    cases = {
        c.eval_id: CaseRecord(
            case_hash=c.case_hash[:HASH_LENGTH],
            scores={name: score for name, m in c.metrics.items() if (score := _case_score(m)) is not None},
            runs=_run_outcomes(c),
            pass_k=run_tally(eval_set, c),
        )
        for c in scored
    }
    criteria = {}
    for name, config in eval_set.criteria.items():
        metrics = [c.metrics[name] for c in scored if name in c.metrics and samples(c.metrics[name])]
        criteria[name] = CriterionRecord(
            threshold=config.threshold,
            config_hash=config.hash[:HASH_LENGTH],
            mean=_mean_of([statistics.fmean(samples(m)) for m in metrics]),
            pass_rate=_mean_of([float(m.status == "passed") for m in metrics]),
            samples=sum(len(samples(m)) for m in metrics),
            cases=len(metrics),
            # agents-cli metrics score on their own scales (a 1–5 rubric, any number a code metric returns):
            # kept as they are, the drift gate compares their means and the trend shows them on that scale
            own_scale=eval_set.shape == "agents_cli",
        )
    return EvalSetRecord(
        agent=eval_set.agent,
        eval_set_id=eval_set.eval_set_id,
        num_runs=eval_set.num_runs,
        run_outcomes=True,
        cost_usd=_per_run(scored, "cost"),
        latency_seconds=_per_run(scored, "latency"),
        criteria=criteria,
        cases=cases,
    )


def record_of(results: ResultsFile, sha: str | None = None) -> HistoryRecord:
    """The record of a whole-suite run (the caller has checked it is one: `run.shards.why_not_a_baseline`)."""
    return HistoryRecord(
        sha=results.git.sha or sha or "unknown",
        date=results.timings.finished_at,
        tool_version=results.tool.version,
        eval_sets=[_eval_set_record(s) for s in results.eval_sets],
        provenance=record_provenance(results),
    )


def appended(history: History, record: HistoryRecord, max_records: int) -> History:
    """One record per commit: a re-run of a commit already recorded replaces its record where it stands."""
    records = list(history.records)
    same = next((i for i, r in enumerate(records) if r.sha == record.sha), None)
    if same is None:
        records.append(record)
    else:
        records[same] = record
    return history.model_copy(update={"records": records[-max_records:]})
