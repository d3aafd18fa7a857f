"""Which case rows the reports show behind a failing gate, chosen once so the console and the comment agree."""

from __future__ import annotations

from adk_eval_gate.baseline.comparison_format import Comparison, Row
from adk_eval_gate.gate.outcome import subject_of


def regression_cases(comparison: Comparison) -> list[Row]:
    """Rows that gate themselves and, inside an eval-set or pooled regression that gates, every case that dropped
    beyond tolerance: with few runs one case alone rarely has the evidence, yet the reviewer needs to see it."""
    sets = {
        (s.agent, s.eval_set_id, s.criterion) for s in comparison.summaries if s.gating and s.verdict == "regressed"
    }
    pooled = {(p.agent, p.criterion) for p in comparison.pooled if p.gating and p.verdict == "regressed"}
    chosen = [
        r
        for r in comparison.rows
        if (r.gating and r.verdict == "regressed")
        or (
            r.verdict in ("regressed", "inconclusive")
            and (r.delta or 0.0) < 0
            and ((r.agent, r.eval_set_id, r.criterion) in sets or (r.agent, r.criterion) in pooled)
        )
    ]
    return sorted(chosen, key=lambda r: (r.verdict != "regressed", r.delta or 0.0))


def non_gating_regressions(comparison: Comparison) -> list[Row]:
    """Case rows significant on their own that did not fail the gate; their reason says why."""
    shown = {subject_of(r) for r in regression_cases(comparison)}
    return [r for r in comparison.rows if r.verdict == "regressed" and subject_of(r) not in shown]
