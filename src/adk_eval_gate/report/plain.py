"""What changed for the user, in plain words, before a verdict's statistics: how many of a verdict's cases scored
lower, and which. A failing condition's line leads with it (`report/notes.py`); the test's own sentence follows."""

from __future__ import annotations

from collections.abc import Iterable

from adk_eval_gate.baseline.models import PooledSummary, Row, Summary
from adk_eval_gate.gate.outcome import Subject, subject_of

_COMPARED = ("regressed", "improved", "unchanged", "inconclusive")
_NAMED = 3  # cases named in the line; the rest counted


def _words(compared: list[Row]) -> str | None:
    lower = sorted((r for r in compared if r.delta is not None and r.delta < 0), key=lambda r: (r.delta, r.eval_id))
    if not lower:
        return None
    names = ", ".join(r.eval_id for r in lower[:_NAMED]) + (", …" if len(lower) > _NAMED else "")
    return f"{len(lower)} of {len(compared)} case{'s' if len(compared) != 1 else ''} scored lower ({names})"


def what_changed(groups: Iterable[PooledSummary | Summary], rows: Iterable[Row]) -> dict[Subject, str]:
    """Per pooled or eval-set verdict that dropped: `k of n cases scored lower (first, …)` over its compared cases."""
    by_set: dict[tuple[str, str, str], list[Row]] = {}
    by_agent: dict[tuple[str, str], list[Row]] = {}
    for row in rows:
        if row.quarantined or row.verdict not in _COMPARED:
            continue  # what the eval-set and pooled tests weighed
        by_set.setdefault((row.agent, row.eval_set_id, row.criterion), []).append(row)
        by_agent.setdefault((row.agent, row.criterion), []).append(row)
    out = {}
    for group in groups:
        if group.delta is None or group.delta >= 0:
            continue
        if isinstance(group, PooledSummary):
            compared = by_agent.get((group.agent, group.criterion), [])
        else:
            compared = by_set.get((group.agent, group.eval_set_id, group.criterion), [])
        if words := _words(compared):
            out[subject_of(group)] = words
    return out
