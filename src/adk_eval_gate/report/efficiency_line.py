"""One line of ADK's efficiency metrics for a report: what an average turn cost. Informational, like in ADK."""

from __future__ import annotations

import statistics
from collections.abc import Iterable

from adk_eval_gate.results.results_format import CaseResult

_LABELS = (
    ("tool_call_count_v1", "{:.1f} tool calls"),
    ("inference_call_count_v1", "{:.1f} model calls"),
    ("token_usage_v1", "{:,.0f} tokens"),
    ("invocation_duration_v1", "{:.2f} s"),
)


def efficiency_line(cases: Iterable[CaseResult]) -> str | None:
    """The mean over cases of each case's per-turn value; metrics nothing reported are left out."""
    cases = list(cases)
    parts = []
    for name, label in _LABELS:
        scores = [c.efficiency[name].score for c in cases if name in c.efficiency]
        values = [s for s in scores if s is not None]
        if values:
            parts.append(label.format(statistics.mean(values)))
    return "per turn: " + ", ".join(parts) if parts else None
