"""Trends where people already look: a text sparkline per agent × criterion in the comment and in `history show`,
and the same series as data for other reports (`trend_data`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from adk_eval_gate.baseline.comparison_format import Trend
from adk_eval_gate.baseline.history.provenance_marks import changed_mark, with_previous
from adk_eval_gate.baseline.history.record_format import History, HistoryRecord

if TYPE_CHECKING:
    from adk_eval_gate.baseline.history.database import StoredHistory

BARS = "▁▂▃▄▅▆▇█"
MIN_SPAN = 0.05  # of the series' largest magnitude (at least 1): a wobble smaller than this does not fill the height


def sparkline(values: Sequence[float | None]) -> str:
    """Scaled to the series itself, but never to less than MIN_SPAN of its scale, so noise does not look like a cliff:
    0.05 of a [0, 1] criterion, 0.25 of a 1–5 rubric (an agents-cli metric on its own scale)."""
    known = [v for v in values if v is not None]
    if not known:
        return " " * len(values)
    low, high = min(known), max(known)
    span = max(high - low, MIN_SPAN * max(1.0, abs(low), abs(high)))
    low -= (span - (high - low)) / 2
    top = len(BARS) - 1
    return "".join(" " if v is None else BARS[min(top, max(0, round((v - low) / span * top)))] for v in values)


def agent_mean(record: HistoryRecord, agent: str, criterion: str) -> float | None:
    """Mean case score of an agent's criterion over all its eval sets, weighted by cases as the pooled verdict is."""
    parts: list[tuple[float, int]] = []
    for s in record.eval_sets:
        found = s.criteria.get(criterion) if s.agent == agent else None
        if found is not None and found.mean is not None:
            parts.append((found.mean, found.cases))
    cases = sum(n for _, n in parts)
    return sum(m * n for m, n in parts) / cases if cases else None


def series(records: Sequence[HistoryRecord], count: int, keys: Sequence[tuple[str, str]] | None = None) -> list[Trend]:
    """Per agent × criterion (by default those of the newest record), its mean over the newest `count` records."""
    shown = list(records[-count:])
    if keys is None:
        keys = list(dict.fromkeys((s.agent, name) for s in shown[-1].eval_sets for name in s.criteria)) if shown else []
    trends = []
    for agent, criterion in keys:
        values = [agent_mean(r, agent, criterion) for r in shown]
        trends.append(
            Trend(
                agent=agent,
                criterion=criterion,
                shas=[r.sha for r in shown],
                values=values,
                sparkline=sparkline(values),
            )
        )
    return trends


def trend_data(history: History | StoredHistory) -> list[dict[str, Any]]:
    """Every record, oldest first, as `{sha, date, criteria: {"agent/eval set/criterion": mean}}`: the series the
    HTML report draws; `changed` marks a record whose judge, served model or scorers differ from the one before."""
    return [
        {
            "sha": record.sha,
            "date": record.date,
            "criteria": {
                f"{s.agent}/{s.eval_set_id}/{name}": c.mean
                for s in record.eval_sets
                for name, c in s.criteria.items()
                if c.mean is not None
            },
            **changed_mark(previous, record),
        }
        for previous, record in with_previous(history.records)  # one summary at a time, as they are read
    ]
