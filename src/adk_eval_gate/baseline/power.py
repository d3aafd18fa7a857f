"""How large a drop the gate can confirm: its power, computed by the gate's own tests.

A *design* is what a gating verdict weighs: the cases it compares, the baseline's runs of each, the pull
request's runs (a fixed count, or an adaptive `{min, max}`), `alpha`, the tolerance and the size of the Holm
family the verdict is decided in. Its smallest confirmable drop is the fewest cases that, broken outright (every
baseline run passed, every pull-request run fails), the gate would call `regressed`. That is the best case a
regression can offer the statistics: if even it cannot be confirmed, no regression of that size can, and a
configuration whose every verdict is like that is a gate that cannot fail.

Nothing here re-derives a formula. Each candidate is decided by the functions the comparison itself uses: the
per-case evidence test (or, for adaptive runs, the two-stage test with its selection and test halves) from
`strata.group_test`, the tolerance check and Holm's multiplicity from `compare.decide_gating`; the other members
of the family are the gating tests that could ever reject (`could_reject`; `compare` leaves the others out, as
Tarone's rule lets it), counted in full. So the statement cannot drift from the gate.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from adk_eval_gate.baseline.compare import decide_gating
from adk_eval_gate.baseline.comparison_format import Summary
from adk_eval_gate.baseline.stages import StagedPair
from adk_eval_gate.baseline.stats import TestResult
from adk_eval_gate.baseline.strata import Strata, group_test

# The adaptive ranges `suggest_runs` tries: min 2 (a first round that can already see a broken case), max up to this.
SUGGESTED_MIN = 2
SUGGESTED_MAX_LIMIT = 20
_CRITERION = "power"


@dataclass(frozen=True)
class Design:
    cases: int
    baseline_runs: int
    first_runs: int  # the pull request's runs; with adaptive runs, `min`
    max_runs: int  # == first_runs for a fixed count
    alpha: float
    tolerance: float
    family: int = 1  # gating verdicts decided together under Holm

    @property
    def adaptive(self) -> bool:
        return self.max_runs > self.first_runs

    def runs_text(self) -> str:
        runs = f"{{{self.first_runs}–{self.max_runs}}}" if self.adaptive else str(self.first_runs)
        baseline = "" if self.baseline_runs == self.max_runs else f", baseline {self.baseline_runs}"
        return f"{runs} run{'' if runs == '1' else 's'}{baseline}"


def _strata(design: Design, broken: int) -> Strata:
    """`broken` cases that always passed and now always fail; the rest identical on both sides."""
    pairs, staged = [], []
    cut = design.baseline_runs // 2  # the selection half, as `stages.baseline_halves` cuts it
    for index in range(design.cases):
        now = 0.0 if index < broken else 1.0
        baseline = [1.0] * design.baseline_runs
        first = [now] * design.first_runs
        # only a case that looks worse gets the extra round (`run/adaptive.undecided`); a broken one always does
        extra = [now] * (design.max_runs - design.first_runs) if index < broken else []
        pairs.append((baseline, first + extra))
        staged.append(StagedPair(baseline, baseline[:cut], baseline[cut:], first, extra))
    return Strata(pairs, [], [], staged if design.adaptive else None)


def decided_in_family(test: TestResult | None, design: Design, tolerance: float | None = None) -> Summary:
    """A verdict row for `test`, decided as `compare` decides it: the tolerance check, and Holm over a family of
    `design.family` gating tests whose others could reject (counted in full)."""

    def row() -> Summary:
        return Summary(
            agent="agent",
            eval_set_id="set",
            criterion=_CRITERION,
            baseline=None,
            current=None,
            delta=None,
            verdict="unchanged",
            reason="",
        )

    tolerance = design.tolerance if tolerance is None else tolerance
    undecided = row().model_copy(update={"delta": test.delta if test else None})
    others = [(row(), TestResult(0.0, 1.0, 1.0, "another gating verdict", 0.0, 0.0), tolerance)]
    return decide_gating([(undecided, test, tolerance), *others * (design.family - 1)], design.alpha)[0]


def regressed(design: Design, broken: int, tolerance: float | None = None) -> bool:
    """Would the gate call `broken` outright broken cases of this design a regression?"""
    return decided_in_family(group_test(_strata(design, broken)), design, tolerance).verdict == "regressed"


def could_reject(design: Design) -> bool:
    """Whether this design's test can ever reach `alpha` alone: its smallest possible p-value, with every case
    varying (the most extreme evidence it can hold), is below it. `compare` leaves a test that cannot out of the
    Holm family (Tarone), so only those that can count in `Design.family`."""
    test = group_test(_strata(design, design.cases))
    return test is not None and test.min_p_drop < design.alpha


def _smallest(design: Design, tolerance: float) -> int | None:
    """Binary search: more broken cases only ever make the drop larger and its p-value smaller. It starts at the
    fewest cases whose drop reaches the tolerance (fewer can never be a regression), the answer in any design with
    power, so that the usual case costs one test."""
    low = max(1, math.ceil(tolerance * design.cases - 1e-9))
    if design.cases < 1 or low > design.cases:
        return None
    if regressed(design, low, tolerance):
        return low
    if not regressed(design, design.cases, tolerance):
        return None
    high = design.cases
    while low < high:
        middle = (low + high) // 2
        if regressed(design, middle, tolerance):
            high = middle
        else:
            low = middle + 1
    return low


def smallest_confirmable(design: Design) -> int | None:
    """The fewest broken cases the gate calls a regression (statistics and tolerance); None: never."""
    return _smallest(design, design.tolerance)


def smallest_significant(design: Design) -> int | None:
    """The fewest broken cases the statistics alone can confirm, whatever the tolerance; None: never."""
    return _smallest(design, 0.0)


def cases_touched(drop: float, cases: int) -> int:
    """The fewest cases a drop of `drop` (score units, averaged over `cases`) can come from: each moves at most 1."""
    return max(1, math.ceil(drop * cases - 1e-9))


def is_unconfirmed(drop: float, cases: int, significant: int | None) -> bool:
    """A drop beyond tolerance that the test did not confirm is *unconfirmed* when the design could not confirm
    even a clean break of as many cases as the drop must touch: the statistics could not have told it from
    noise, so the gate cannot know. When the design could, a non-significant drop of this size is what noise
    does, and passes."""
    return significant is None or cases_touched(drop, cases) < significant


def suggest_runs(design: Design) -> tuple[int, int] | None:
    """The cheapest adaptive range `{min: 2, max: M}` (baseline pushed at M) that confirms the smallest drop beyond
    tolerance any design could (a whole case at least), else the cheapest that confirms anything; None: no range
    up to max 20 can, only more cases or a larger alpha."""
    best = max(1, math.ceil(design.tolerance * design.cases - 1e-9))
    fallback = None
    for most in range(SUGGESTED_MIN + 1, SUGGESTED_MAX_LIMIT + 1):
        candidate = Design(design.cases, most, SUGGESTED_MIN, most, design.alpha, design.tolerance, design.family)
        confirms = smallest_confirmable(candidate)
        if confirms is not None and confirms <= best:
            return SUGGESTED_MIN, most
        if confirms is not None and fallback is None:
            fallback = (SUGGESTED_MIN, most)
    return fallback
