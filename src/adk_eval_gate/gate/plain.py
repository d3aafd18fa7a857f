"""What changed for the user, in plain words, before a verdict's statistics: how many of a verdict's cases scored
lower, and which, and where the lowest one's tool calls first departed from the expected ones when a trajectory
criterion judged it. A failing condition's line leads with it (`gate/wording.py`); the test's own sentence follows."""

from __future__ import annotations

from collections.abc import Iterable

from adk_eval_gate.baseline.comparison_format import PooledSummary, Row, Summary
from adk_eval_gate.baseline.decision_records import Subject
from adk_eval_gate.core.clip import clip_words
from adk_eval_gate.gate.outcome import subject_of
from adk_eval_gate.results.results_format import CaseResult, ResultsFile

_COMPARED = ("regressed", "improved", "unchanged", "inconclusive")
_NAMED = 3  # cases named in the line; the rest counted
# The criteria whose failing turns carry where the calls first departed (criteria/tool_divergence.py).
_TRAJECTORY = frozenset({"tool_trajectory_avg_score"})
_DIVERGENCE_CHARS = 120
CaseKey = tuple[str, str, str]


def first_divergence(case: CaseResult, criterion: str) -> str | None:
    """`first diverging call: expected roll_die(sides=6), got roll_dice(sides=6)` from the case's first run whose
    turn did not match (`turn 2: …` when the case has several turns), masked and clipped; None when the criterion
    is not a trajectory one or no turn recorded where it departed."""
    metric = case.metrics.get(criterion)
    if criterion not in _TRAJECTORY or metric is None:
        return None
    for run in metric.runs:
        turns = run.per_invocation if run else []
        for index, turn in enumerate(turns):
            if turn.detail and turn.score is not None and turn.score < 1.0:
                where = f"turn {index + 1}: " if len(turns) > 1 else ""
                return clip_words(f"first diverging call: {where}{turn.detail}", _DIVERGENCE_CHARS)
    return None


def cases_of(results: ResultsFile | None) -> dict[CaseKey, CaseResult]:
    """The current run's cases by (agent, eval set, case id)."""
    if results is None:
        return {}
    return {(s.agent, s.eval_set_id, c.eval_id): c for s in results.eval_sets for c in s.cases}


def row_divergence(row: Row, cases: dict[CaseKey, CaseResult]) -> str | None:
    """`first_divergence` of a case row that scored lower, from the current run's case."""
    if row.delta is None or row.delta >= 0:
        return None
    case = cases.get((row.agent, row.eval_set_id, row.eval_id))
    return first_divergence(case, row.criterion) if case else None


def _words(compared: list[Row], cases: dict[CaseKey, CaseResult]) -> str | None:
    lower = sorted((r for r in compared if r.delta is not None and r.delta < 0), key=lambda r: (r.delta, r.eval_id))
    if not lower:
        return None
    names = ", ".join(r.eval_id for r in lower[:_NAMED]) + (", …" if len(lower) > _NAMED else "")
    words = f"{len(lower)} of {len(compared)} case{'s' if len(compared) != 1 else ''} scored lower ({names})"
    # the first case that says where its calls departed: one named call, not one per case, keeps the line short
    diverged = next(((r, d) for r in lower if (d := row_divergence(r, cases))), None)
    return f"{words}; {diverged[0].eval_id}: {diverged[1]}" if diverged else words


def what_changed(
    groups: Iterable[PooledSummary | Summary], rows: Iterable[Row], current: ResultsFile | None = None
) -> dict[Subject, str]:
    """Per pooled or eval-set verdict that dropped: `k of n cases scored lower (first, …)` over its compared cases,
    then, from the `current` run's results, where the first of them whose calls departed did so."""
    by_set: dict[tuple[str, str, str], list[Row]] = {}
    by_agent: dict[tuple[str, str], list[Row]] = {}
    for row in rows:
        if row.quarantined or row.verdict not in _COMPARED:
            continue  # what the eval-set and pooled tests weighed
        by_set.setdefault((row.agent, row.eval_set_id, row.criterion), []).append(row)
        by_agent.setdefault((row.agent, row.criterion), []).append(row)
    out, cases = {}, cases_of(current)
    for group in groups:
        if group.delta is None or group.delta >= 0:
            continue
        if isinstance(group, PooledSummary):
            compared = by_agent.get((group.agent, group.criterion), [])
        else:
            compared = by_set.get((group.agent, group.eval_set_id, group.criterion), [])
        if words := _words(compared, cases):
            out[subject_of(group)] = words
    return out
