"""What a configured suite can confirm, per agent, and which inconclusive drops it could not have confirmed.

`validate` states it from the plan, before anything runs; the comparison states it from the results it compared
(the baseline's real run count included) and marks the drops the gate cannot know about as *unconfirmed*.
Both go through `assess`, so the two statements agree whenever the baseline was made as a push makes it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import cast

from adk_eval_gate.baseline.models import AgentPower, PooledSummary, PowerLine, Summary
from adk_eval_gate.baseline.power import (
    Design,
    cases_touched,
    could_reject,
    is_unconfirmed,
    smallest_confirmable,
    smallest_significant,
    suggest_runs,
)
from adk_eval_gate.baseline.row_notes import Settle, Unconfirmed, VerdictNote
from adk_eval_gate.config.models import GateSettings
from adk_eval_gate.results.models import ResultsFile


@dataclass(frozen=True)
class SetDesign:
    """One agent × eval set as the gate will weigh it."""

    agent: str
    eval_set_id: str
    cases: int
    criteria: tuple[str, ...]
    baseline_runs: int
    first_runs: int
    max_runs: int


def pushed_baseline_runs(first_runs: int, max_runs: int) -> int:
    """A push to the default branch runs adaptive agents at `max` (run/rounds.first_round_runs): the baseline."""
    return max(first_runs, max_runs)


def _pooled_shape(mine: Sequence[SetDesign]) -> SetDesign:
    """An agent's eval sets pooled: every case, the agent's runs (num_runs is per agent), the fewest baseline runs."""
    return SetDesign(
        mine[0].agent,
        f"all {len(mine)} eval sets",
        sum(s.cases for s in mine),
        tuple(dict.fromkeys(c for s in mine for c in s.criteria)),
        min(s.baseline_runs for s in mine),
        mine[0].first_runs,
        mine[0].max_runs,
    )


def _by_agent(sets: Sequence[SetDesign]) -> dict[str, list[SetDesign]]:
    out: dict[str, list[SetDesign]] = {}
    for s in sets:
        out.setdefault(s.agent, []).append(s)
    return out


def family_size(sets: Sequence[SetDesign], gate: GateSettings, also: int = 0) -> int:
    """Gating verdicts in the run's Holm family: every eval set × criterion, and each agent × criterion pooled over
    two or more eval sets (baseline/compare.py), each counted only when its test could ever reach alpha alone;
    `also`: other tests in the family (the drift tests, when they gate)."""
    shapes = list(sets) + [_pooled_shape(mine) for mine in _by_agent(sets).values() if len(mine) >= 2]
    size = 0
    for shape in shapes:
        for criterion in shape.criteria:
            size += _could_reject(_design(shape.cases, shape, gate.tolerance_for(criterion), gate, 1))
    return max(1, size + also)


@lru_cache(maxsize=4096)
def _could_reject(design: Design) -> bool:
    return design.cases > 0 and could_reject(design)


@lru_cache(maxsize=4096)
def _confirmable(design: Design) -> int | None:
    return smallest_confirmable(design)


@lru_cache(maxsize=4096)
def _significant(design: Design) -> int | None:
    return smallest_significant(design)


@lru_cache(maxsize=256)
def _suggested(design: Design) -> tuple[int, int] | None:
    return suggest_runs(design)


def _tolerance(gate: GateSettings, criteria: Sequence[str]) -> float:
    # the largest tolerance of the set's criteria: a drop must clear it on the criterion that asks the most
    return max((gate.tolerance_for(c) for c in criteria), default=gate.tolerance_for("default"))


def _design(cases: int, s: SetDesign, tolerance: float, gate: GateSettings, family: int) -> Design:
    return Design(cases, s.baseline_runs, s.first_runs, s.max_runs, gate.alpha, tolerance, family)


def statement(design: Design, confirms: int | None) -> str:
    head = f"{design.cases} case{'s' if design.cases != 1 else ''} × {design.runs_text()}"
    if confirms is None:
        return f"{head} → cannot confirm a drop of any size at alpha {design.alpha:g}"
    points = 100 * confirms / design.cases
    return f"{head} → confirms a drop of {confirms} case{'s' if confirms != 1 else ''} / {points:.1f} points"


def runs_setting(suggested: tuple[int, int]) -> str:
    return f"num_runs: {{min: {suggested[0]}, max: {suggested[1]}}}"


def unconfirmed_window(design: Design) -> float | None:
    """Drops beyond tolerance up to this size (score units) are unconfirmed in this design: they touch fewer cases
    than its statistics can confirm (`power.is_unconfirmed`). None: no such drop."""
    significant = _significant(design) if design.cases else None
    if significant is None:
        return 1.0
    largest = (significant - 1) / design.cases  # a drop touching significant − 1 cases or fewer
    return largest if largest >= design.tolerance else None


def _line(agent: str, scope: str, design: Design) -> PowerLine:
    confirms = _confirmable(design) if design.cases else None
    window = unconfirmed_window(design)
    return PowerLine(
        agent=agent,
        scope=scope,
        cases=design.cases,
        runs=design.runs_text(),
        confirms=confirms,
        statement=f"{scope}: {statement(design, confirms)}",
        unconfirmed_up_to=None if window is None else round(100 * window, 1),
    )


def assess(sets: Sequence[SetDesign], gate: GateSettings, also: int = 0) -> list[AgentPower]:
    family = family_size(sets, gate, also)
    out = []
    for agent, mine in _by_agent(sets).items():
        shapes = [*mine, _pooled_shape(mine)] if len(mine) >= 2 else list(mine)
        designs = [(s.eval_set_id, _design(s.cases, s, _tolerance(gate, s.criteria), gate, family)) for s in shapes]
        lines = [_line(agent, scope, design) for scope, design in designs]
        weak = all(line.confirms is None for line in lines)
        suggestion = None
        if weak or lines[-1].unconfirmed_up_to is not None:
            largest = max((d for _, d in designs), key=lambda d: d.cases)
            suggested = _suggested(largest) if largest.cases else None
            suggestion = runs_setting(suggested) if suggested else None
        out.append(AgentPower(agent=agent, lines=lines, family=family, weak=weak, suggestion=suggestion))
    return out


def designs_from_results(current: ResultsFile, baseline: ResultsFile | None) -> list[SetDesign]:
    """The eval sets as this comparison weighs them: the baseline's own run count when there is one, else the
    count a push would give it."""
    base = {(s.agent, s.eval_set_id): s for s in baseline.eval_sets} if baseline else {}
    out = []
    for s in current.eval_sets:
        first = s.adaptive_runs.min if s.adaptive_runs is not None else s.num_runs
        base_set = base.get((s.agent, s.eval_set_id))
        out.append(
            SetDesign(
                s.agent,
                s.eval_set_id,
                len(s.cases),
                tuple(s.criteria),
                base_set.num_runs if base_set else pushed_baseline_runs(first, s.num_runs),
                first,
                s.num_runs,
            )
        )
    return out


def _settle(design: Design, cases: int) -> Settle:
    suggested = _suggested(design)
    if suggested and suggested[1] > design.max_runs:
        return Settle(kind="more_runs", runs=suggested, cases=cases)
    return Settle(kind="more_cases", cases=cases)


@dataclass(frozen=True)
class Marked:
    """The pooled and eval-set rows again, every unconfirmed drop marked, and per marked row what would settle it
    (the first one is what the headline names)."""

    pooled: list[PooledSummary]
    summaries: list[Summary]
    settles: list[Settle]


def mark_unconfirmed(
    pooled: Sequence[PooledSummary],
    summaries: Sequence[Summary],
    sets: Sequence[SetDesign],
    gate: GateSettings,
    also: int = 0,
) -> Marked:
    """Marks every inconclusive drop the design could not have confirmed, on new rows.

    An eval set's drop also counts in its agent's pooled verdict, so it is unconfirmed only when neither that eval
    set's test nor the pooled one could confirm a clean break of the cases it touches; and a pooled verdict that
    regressed has already confirmed its eval sets' drops."""
    family = family_size(sets, gate, also)
    agents = _by_agent(sets)
    by_set = {(s.agent, s.eval_set_id): s for s in sets}
    pooled_by = {(p.agent, p.criterion): p for p in pooled}
    settles: list[Settle] = []
    marked: dict[int, PooledSummary | Summary] = {}
    verdicts: list[PooledSummary | Summary] = [*pooled, *summaries]
    for row in verdicts:
        if row.verdict != "inconclusive" or row.delta is None or row.delta >= 0 or not row.cases_compared:
            continue
        tolerance = gate.tolerance_for(row.criterion)
        if isinstance(row, PooledSummary):
            shapes = [(_pooled_shape(agents[row.agent]), row.cases_compared)] if row.agent in agents else []
        else:
            together = pooled_by.get((row.agent, row.criterion))
            if together is not None and together.verdict == "regressed":
                continue
            own = by_set.get((row.agent, row.eval_set_id))
            shapes = [(own, row.cases_compared)] if own else []
            if together is not None and row.agent in agents:
                shapes.append((_pooled_shape(agents[row.agent]), together.cases_compared))
        if not shapes:
            continue
        designs = [_design(cases, shape, tolerance, gate, family) for shape, cases in shapes]
        found = [n for n in (_significant(d) for d in designs) if n is not None]
        significant = min(found) if found else None
        if not is_unconfirmed(-row.delta, row.cases_compared, significant):
            continue
        own_design = designs[0]
        settle = _settle(designs[-1], designs[-1].cases)
        unconfirmed = Unconfirmed(
            touched=cases_touched(-row.delta, row.cases_compared),
            cases=own_design.cases,
            first_runs=own_design.first_runs,
            max_runs=own_design.max_runs,
            baseline_runs=own_design.baseline_runs,
            pooled_cases=designs[-1].cases if len(designs) > 1 else None,
            significant=significant,
            alpha=gate.alpha,
            settle=settle,
        )
        assert isinstance(row.note, VerdictNote)  # an inconclusive verdict, decided by compare
        note = row.note.model_copy(update={"unconfirmed": unconfirmed})
        marked[id(row)] = row.model_copy(update={"unconfirmed": True, "note": note})
        settles.append(settle)
    return Marked(
        [cast(PooledSummary, marked.get(id(p), p)) for p in pooled],
        [cast(Summary, marked.get(id(s), s)) for s in summaries],
        settles,
    )
