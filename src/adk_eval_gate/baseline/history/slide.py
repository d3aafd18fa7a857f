"""The drift gate's change-point (baseline/drift_start.py) over the history: per agent × criterion, the records
from the drift reference to the base, each as the agent's mean case score (the trend's value)."""

from __future__ import annotations

from collections.abc import Sequence

from adk_eval_gate.baseline.drift_start import DriftStart, Point, locate
from adk_eval_gate.baseline.history.drift import Pending
from adk_eval_gate.baseline.history.record_format import HistoryRecord
from adk_eval_gate.baseline.history.trend import agent_mean


def points(records: Sequence[HistoryRecord], agent: str, criterion: str) -> list[Point]:
    """The records with a mean for the agent's criterion, oldest first."""
    found = []
    for record in records:
        value = agent_mean(record, agent, criterion)
        if value is not None:
            found.append((record.sha, record.date, value))
    return found


def slide_start(records: Sequence[HistoryRecord], agent: str, criterion: str) -> DriftStart | None:
    return locate(points(records, agent, criterion))


def with_starts(pending: Sequence[Pending], span: Sequence[HistoryRecord]) -> list[Pending]:
    """Each drift row with where its slide began, over `span` (the reference to the base); only rows whose means
    fell carry one: a criterion that rose or held has no slide to point to."""
    marked = []
    for row, test, tolerance in pending:
        fell = row.delta is not None and row.delta < 0
        start = slide_start(span, row.agent, row.criterion) if fell else None
        marked.append((row.model_copy(update={"began": start}), test, tolerance))
    return marked
