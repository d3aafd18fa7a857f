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

from adk_eval_gate.baseline.comparison_format import AgentPower, PooledSummary, PowerLine, Row, Summary
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
from adk_eval_gate.config.workflow_settings import GateSettings
from adk_eval_gate.results.results_format import ResultsFile


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


def _settle(design: Design, cases: int, in_hand: Design | None = None, baseline: str | None = None) -> Settle:
    """What would settle it: when the design confirms the drop but the samples in hand fall short of it, the runs
    they lack (extra runs for the cases that look worse, a baseline at the range's max); else a wider range, or
    more cases."""
    if in_hand is not None:
        return Settle(
            kind="in_hand",
            runs=(design.first_runs, design.max_runs),
            cases=cases,
            baseline_runs=in_hand.baseline_runs if in_hand.baseline_runs < design.max_runs else None,
            extra=in_hand.max_runs < design.max_runs,
            baseline=baseline,
        )
    suggested = _suggested(design)
    if suggested and suggested[1] > design.max_runs:
        return Settle(kind="more_runs", runs=suggested, cases=cases)
    return Settle(kind="more_cases", cases=cases)


@dataclass(frozen=True)
class _Samples:
    """The samples a verdict's cases actually hold: the fewest a baseline case has, the fewest a current case has,
    and the most a case that dropped has (its extra runs included, when it got them)."""

    baseline: int
    first: int
    dropped: int
    scale: float = 1.0  # the largest score seen: a metric on its own scale (agents-cli) moves a case by up to it


def _in_hand(rows: Sequence[Row]) -> dict[tuple[str, str, str], _Samples]:
    """Per (agent, eval set, criterion), and per (agent, "", criterion) pooled: the samples of the compared cases."""
    found: dict[tuple[str, str, str], list[Row]] = {}
    for row in rows:
        if row.quarantined or row.baseline_samples < 1 or row.current_samples < 1:
            continue
        if row.verdict not in ("regressed", "improved", "unchanged", "inconclusive"):
            continue
        for key in ((row.agent, row.eval_set_id, row.criterion), (row.agent, "", row.criterion)):
            found.setdefault(key, []).append(row)
    out = {}
    for key, mine in found.items():
        # the most a dropped case ran: one that got its extra runs shows the run did extend the cases that looked
        # worse, as a broken case always is (run/adaptive.py)
        dropped = [r.current_samples for r in mine if r.delta is not None and r.delta < 0]
        first = min(r.current_samples for r in mine)
        seen = [abs(v) for r in mine for v in (r.baseline, r.current) if v is not None]
        scale = max(1.0, *seen) if seen else 1.0
        out[key] = _Samples(min(r.baseline_samples for r in mine), first, max(dropped, default=first), scale)
    return out


def _held(design: Design, samples: _Samples | None) -> Design | None:
    """`design` as the samples in hand make it (None: they are what it promised): a case that dropped ran as many
    times as it actually did, each baseline case as many as the fewest did."""
    if samples is None:
        return None
    first = min(design.first_runs, samples.first)
    most = max(first, min(design.max_runs, samples.dropped))
    baseline = min(design.baseline_runs, samples.baseline)
    if (baseline, first, most) == (design.baseline_runs, design.first_runs, design.max_runs):
        return None
    return Design(design.cases, baseline, first, most, design.alpha, design.tolerance, design.family)


def _fewest(designs: Sequence[Design]) -> int | None:
    """The smallest clean break any of these designs confirms (None: none does)."""
    found = [n for n in (_significant(d) for d in designs) if n is not None]
    return min(found) if found else None


@dataclass(frozen=True)
class Marked:
    """The pooled and eval-set rows again, every unconfirmed drop marked, and per marked row what would settle it
    (the first one is what the headline names)."""

    pooled: list[PooledSummary]
    summaries: list[Summary]
    settles: list[Settle]


def _shapes(
    row: PooledSummary | Summary,
    agents: dict[str, list[SetDesign]],
    by_set: dict[tuple[str, str], SetDesign],
    pooled_by: dict[tuple[str, str], PooledSummary],
) -> list[tuple[SetDesign, int, str]]:
    """The designs a drop is weighed in (its own, then its agent's pooled one), each with the cases compared and the
    eval set its samples are counted in ("" pooled); none when a pooled verdict that regressed confirmed it."""
    if isinstance(row, PooledSummary):
        return [(_pooled_shape(agents[row.agent]), row.cases_compared, "")] if row.agent in agents else []
    together = pooled_by.get((row.agent, row.criterion))
    if together is not None and together.verdict == "regressed":
        return []
    own = by_set.get((row.agent, row.eval_set_id))
    shapes = [(own, row.cases_compared, row.eval_set_id)] if own else []
    if together is not None and row.agent in agents:
        shapes.append((_pooled_shape(agents[row.agent]), together.cases_compared, ""))
    return shapes


def mark_unconfirmed(
    pooled: Sequence[PooledSummary],
    summaries: Sequence[Summary],
    sets: Sequence[SetDesign],
    gate: GateSettings,
    also: int = 0,
    rows: Sequence[Row] = (),
    baseline_file: str | None = None,
) -> Marked:
    """Marks every inconclusive drop that the design, or the samples in hand (`rows`, the compared cases), could
    not have confirmed, on new rows.

    An eval set's drop also counts in its agent's pooled verdict, so it is unconfirmed only when neither that eval
    set's test nor the pooled one could confirm a clean break of the cases it touches; and a pooled verdict that
    regressed has already confirmed its eval sets' drops. The samples in hand are weighed as the design is, with
    the runs they really hold: a run with no baseline to extend its cases, or a baseline made at the range's min,
    holds fewer than the design promises, and a drop the design could confirm may be one these samples cannot."""
    weighing = _Weighing(
        gate,
        family_size(sets, gate, also),
        _by_agent(sets),
        {(s.agent, s.eval_set_id): s for s in sets},
        {(p.agent, p.criterion): p for p in pooled},
        _in_hand(rows),
        baseline_file,
    )
    settles: list[Settle] = []
    # joined on each verdict's subject (its scope, agent, eval set, criterion), never on the object's identity
    marked: dict[tuple[str, str | None, str], PooledSummary | Summary] = {}
    verdicts: list[PooledSummary | Summary] = [*pooled, *summaries]
    for row in verdicts:
        if row.verdict != "inconclusive" or row.delta is None or row.delta >= 0 or not row.cases_compared:
            continue
        found = _unconfirmed(row, weighing)
        if found is None:
            continue
        assert isinstance(row.note, VerdictNote)  # an inconclusive verdict, decided by compare
        note = row.note.model_copy(update={"unconfirmed": found})
        marked[_verdict_key(row)] = row.model_copy(update={"unconfirmed": True, "note": note})
        settles.append(found.settle)
    return Marked(
        [cast(PooledSummary, marked.get(_verdict_key(p), p)) for p in pooled],
        [cast(Summary, marked.get(_verdict_key(s), s)) for s in summaries],
        settles,
    )


@dataclass(frozen=True)
class _Weighing:
    """What every verdict of one comparison is weighed against: the gate, its Holm family, the designs by agent,
    eval set and pooled verdict, the samples in hand and the baseline file a settle command names."""

    gate: GateSettings
    family: int
    agents: dict[str, list[SetDesign]]
    by_set: dict[tuple[str, str], SetDesign]
    pooled_by: dict[tuple[str, str], PooledSummary]
    held: dict[tuple[str, str, str], _Samples]
    baseline_file: str | None


def _unconfirmed(row: PooledSummary | Summary, weighing: _Weighing) -> Unconfirmed | None:
    """Why this inconclusive drop is unconfirmed (the design, or the samples in hand, could not have confirmed it),
    or None when it is simply not there."""
    gate, held = weighing.gate, weighing.held
    tolerance = gate.tolerance_for(row.criterion)
    shapes = _shapes(row, weighing.agents, weighing.by_set, weighing.pooled_by)
    if not shapes or row.delta is None or not row.cases_compared:
        return None
    designs = [_design(cases, shape, tolerance, gate, weighing.family) for shape, cases, _ in shapes]
    held_designs = [
        _held(d, held.get((row.agent, scope, row.criterion))) for d, (_, _, scope) in zip(designs, shapes, strict=True)
    ]
    in_hand = [h or d for h, d in zip(held_designs, designs, strict=True)]
    significant, significant_in_hand = _fewest(designs), _fewest(in_hand)
    # in score units of [0, 1]: a metric on its own scale (agents-cli) is divided by the largest score seen, so
    # that a case counts as touched only as far as it can move
    own = held.get((row.agent, shapes[0][2], row.criterion))
    drop = -row.delta / (own.scale if own else 1.0)
    short = is_unconfirmed(drop, row.cases_compared, significant_in_hand)
    confirmable = not is_unconfirmed(drop, row.cases_compared, significant)
    if confirmable and not short:
        return None
    # the design could confirm it and the samples in hand cannot: the runs they lack settle it
    lacking = next((h for h in reversed(held_designs) if h is not None), None) if confirmable else None
    weighed = in_hand[0] if lacking is not None else designs[0]
    return Unconfirmed(
        touched=cases_touched(drop, row.cases_compared),
        cases=weighed.cases,
        first_runs=weighed.first_runs,
        max_runs=weighed.max_runs,
        baseline_runs=weighed.baseline_runs,
        pooled_cases=designs[-1].cases if len(designs) > 1 else None,
        significant=significant_in_hand if lacking is not None else significant,
        alpha=gate.alpha,
        settle=_settle(designs[-1], designs[-1].cases, lacking, weighing.baseline_file),
        in_hand=lacking is not None,
    )


def _verdict_key(row: PooledSummary | Summary) -> tuple[str, str | None, str]:
    """A pooled verdict (eval set None) or an eval set's, by what it is about."""
    return (row.agent, row.eval_set_id if isinstance(row, Summary) else None, row.criterion)
