"""What a compared row says about its verdict, as data: which rule decided it and the figures it decided on. No
sentence is made here: `gate/reasons.py` turns a row's note into the `reason` people read (and comparison.json
stores), so the words can change without touching a comparison.

Every note is frozen, and left out of the comparison file (the rows' `note` field is excluded when dumped): what a
file stores is the sentence, as it always did.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict


class _Note(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


VerdictKind = Literal[
    "one_sample_within",  # one sample a side, the change within tolerance
    "one_sample_beyond",  # one sample a side, the change beyond it: not enough evidence alone
    "dropped",  # significant and at least the tolerance, downwards
    "rose",  # likewise upwards
    "within",  # within tolerance
    "beyond",  # beyond tolerance, not significant: could be noise
    "cannot_reach",  # beyond tolerance, and these samples could never be significant
    "within_judge_noise",  # dropped, but not on judge-averaged scores: the judge's noise (baseline/judge_noise.py)
]
CountedIn = Literal["eval_set", "eval_set_and_pooled", "pooled"]


class Settle(_Note):
    """What would settle an unconfirmed drop: adaptive runs (`runs`: min and max, above what the run had), or, when no
    num_runs up to max 20 would, more cases than its `cases`; or (`in_hand`) the runs the configured range (`runs`)
    would have given but the samples in hand lack: `extra`, the cases that look worse never got their extra runs
    (no baseline when they ran); `baseline_runs`, the baseline holds only this many runs a case."""

    kind: Literal["more_runs", "more_cases", "in_hand"]
    runs: tuple[int, int] | None = None
    cases: int
    baseline_runs: int | None = None
    extra: bool = False
    baseline: str | None = None  # in_hand: the baseline file compared with, for the command line


class Unconfirmed(_Note):
    """A drop the run's design could not have confirmed (gate.unconfirmed): how many cases it touches at least, the
    design it was weighed with, the smallest clean break that design confirms (None: none) and what would settle it."""

    touched: int
    cases: int
    first_runs: int
    max_runs: int  # above first_runs: adaptive runs
    baseline_runs: int
    pooled_cases: int | None = None  # weighed pooled with the agent's other eval sets, over this many cases
    significant: int | None
    alpha: float
    settle: Settle
    in_hand: bool = False  # the design could confirm it; the samples in hand (the runs above) cannot


class VerdictNote(_Note):
    """A verdict of the rule shared by every comparison (`compare.verdict_for`), and what compare, the power check and
    the drift test add to it."""

    kind: VerdictKind
    delta: float
    tolerance: float
    p: float | None = None  # the p-value decided on (None with one sample a side)
    alpha: float | None = None
    method: str | None = None  # the test's name, for a significant change
    smallest: float | None = None  # cannot_reach: the smallest p-value these samples allow
    values: tuple[float | None, float | None] | None = None  # with no test: baseline and current, shown first
    counted_in: CountedIn | None = None  # an inconclusive case or eval set: the verdicts its evidence counts in
    pooled_over: tuple[int, int] | None = None  # a pooled verdict: (cases, eval sets)
    unconfirmed: Unconfirmed | None = None
    since: str | None = None  # a drift verdict: the reference it was compared with
    means: tuple[float | None, float | None, int] | None = None  # a drift verdict: (reference, current, cases)
    judge_flip: float | None = None  # within_judge_noise: how often the judge disagrees with itself on the case
    judge_delta: float | None = None  # within_judge_noise: the change on judge-averaged scores


StatusKind = Literal[
    "case_new",
    "case_removed",
    "case_edited",
    "threshold_changed",
    "options_changed",
    "scorer_changed",
    "not_run",
    "errored",
    "no_score",
    "set_new",
    "criterion_removed",
    "none_compared",
    "set_removed",
]


Side = Literal["current run", "baseline"]


class StatusNote(_Note):
    """Why a case or an eval set × criterion was not compared. `detail`: the results file's own reason (not run,
    errored, no score); `side`: which run it is about; `thresholds`: (baseline, current) of a changed criterion."""

    kind: StatusKind
    criterion: str | None = None
    thresholds: tuple[float, float] | None = None
    side: Side | None = None
    detail: str | None = None


EfficiencyKind = Literal["regressed", "improved", "within", "beyond"]


class EfficiencyNote(_Note):
    """An efficiency verdict; its other figures (values, change, tolerance, cases) are the row's own."""

    kind: EfficiencyKind
    p: float
    alpha: float
    # beyond, upwards: these samples could not reach alpha whatever they held (at best `smallest`): the gate cannot
    # know, and when the metric's condition gates, gate.unconfirmed decides what it does
    unconfirmed: bool = False
    smallest: float | None = None


RowNote = VerdictNote | StatusNote
