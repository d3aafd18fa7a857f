"""What `history show` adds about reliability: each eval set's pass^k over the newest records (from the cases'
pass^k tallies, baseline/pass_k.py), and, per agent × criterion whose mean declined significantly since the drift
reference, the merge where the decline began (baseline/drift_start.py)."""

from __future__ import annotations

from collections.abc import Sequence

from adk_eval_gate.baseline.comparison_format import HistoryReport
from adk_eval_gate.baseline.history.record_format import EvalSetRecord, HistoryRecord
from adk_eval_gate.baseline.history.slide import slide_start
from adk_eval_gate.baseline.pass_k import RunTally, set_estimate
from adk_eval_gate.core.clip import short_sha
from adk_eval_gate.gate.reasons import slide_text
from adk_eval_gate.report.escape import strip_controls


def _clean(text: str) -> str:
    return " ".join(strip_controls(text).split())


def _tallies(eval_set: EvalSetRecord) -> dict[str, RunTally]:
    return {eid: case.pass_k for eid, case in eval_set.cases.items() if case.pass_k is not None}


def _cell(eval_set: EvalSetRecord | None, k: int | None) -> tuple[str, int | None]:
    """One record's pass^k of an eval set, and the k it used: `k`, else the fewest runs a case had (pass^n: every
    run passed)."""
    counts = _tallies(eval_set) if eval_set is not None else {}
    if not counts:
        return "—", None  # not recorded (an earlier version's record, or no case with a threshold)
    used = k if k is not None else min(runs for _, runs in counts.values())
    if used < 1:
        return "—", None
    estimate = set_estimate(counts, used)
    if estimate.value is None or estimate.bounds is None:
        return f"n/a (k={used} > runs)", used
    low, high = estimate.bounds
    return f"{estimate.value:.2f} [{low:.2f}, {high:.2f}]", used


def pass_k_lines(records: Sequence[HistoryRecord], k: int | None) -> list[str]:
    """Per eval set of the newest record, its pass^k in each of `records` (with their cases), newest first."""
    if not records:
        return []
    which = f"k={k} (gate.pass_k)" if k is not None else "k = the fewest runs of a case: every run passed"
    lines = []
    for newest in records[-1].eval_sets:
        cells, known = [], False
        for record in reversed(records):
            found = next(
                (s for s in record.eval_sets if (s.agent, s.eval_set_id) == (newest.agent, newest.eval_set_id)), None
            )
            text, used = _cell(found, k)
            known = known or used is not None
            cells.append(f"{short_sha(record.sha)} {text}" + (f" k={used}" if k is None and used else ""))
        if known:  # records of earlier versions hold no tallies: nothing to show for them alone
            lines.append(f"    {_clean(f'{newest.agent}/{newest.eval_set_id}')}: " + "; ".join(cells))
    return [f"  pass^k per eval set, {which}; 95% interval over cases; newest first:", *lines] if lines else []


def slide_lines(report: HistoryReport, records: Sequence[HistoryRecord]) -> list[str]:
    """Per agent × criterion of the newest record whose mean fell since the drift reference: where it began."""
    if report.reference_sha is None or not records:
        return []
    ref = next((i for i in range(len(records) - 1, -1, -1) if records[i].sha == report.reference_sha), None)
    if ref is None:
        return []
    span = records[ref:]
    lines = []
    for agent, criterion in dict.fromkeys((s.agent, n) for s in records[-1].eval_sets for n in s.criteria):
        start = slide_start(span, agent, criterion)
        if start is not None and start.significant:  # a wobble the records cannot single out is not shown
            lines.append(f"    {_clean(f'{agent} {criterion}')}: {slide_text(start)}")
    return ["  Since the drift reference, declines and where they began:", *lines] if lines else []
