"""The calibration's noise model, and how often a design catches a drop under it.

`baseline/power.py` answers "what is the smallest drop this design can confirm at all" (outright broken cases,
no noise); real agents are noisy, so `init` sizes `num_runs` by simulation instead: cases whose true pass
probabilities follow a realistic mix (most reliable, some flaky, a few hard), observed through a judge that flips
5% of verdicts, a pull request whose regression breaks some cases (up to 50 points each: *concentrated*) or all
a little (*diffuse*). The same model is what bench/gate_calibration.py measures the gate's false alarms and power
with, so `init`'s choice is the calibration's, not a second opinion. Every pull request is decided by the gate's
own tests (`strata.group_test`, `compare.decide_gating`) and the decider's own rule (`stages.undecided`).
"""

from __future__ import annotations

import random
import statistics
from collections.abc import Callable
from dataclasses import dataclass

from adk_eval_gate.baseline.power import (
    Design,
    decided_in_family,
    is_unconfirmed,
    smallest_confirmable,
    smallest_significant,
)
from adk_eval_gate.baseline.stages import StagedPair, undecided
from adk_eval_gate.baseline.strata import Strata, group_test

JUDGE_FLIP = 0.05
CRITERION = "tool_trajectory_avg_score"
Rates = Callable[[random.Random, int], list[float]]
Drop = Callable[[list[float], float, random.Random], list[float]]


def true_pass_rates(rng: random.Random, cases: int) -> list[float]:
    """The realistic mix: 60% reliable (0.9–1), 25% flaky (0.5–0.9), 15% hard (0–0.5)."""
    rates = []
    for _ in range(cases):
        kind = rng.random()
        if kind < 0.60:
            rates.append(rng.uniform(0.90, 1.00))
        elif kind < 0.85:
            rates.append(rng.uniform(0.50, 0.90))
        else:
            rates.append(rng.uniform(0.00, 0.50))
    return rates


def heavy_tailed_rates(rng: random.Random, cases: int) -> list[float]:
    return [rng.betavariate(0.6, 0.2) for _ in range(cases)]


@dataclass(frozen=True)
class PassKFit:
    """Per-case pass probabilities fitted to a published pass^k table: a share that always passes, a share that
    never does, the rest Beta(a, b). Then pass^k = always + between · B(a + k, b) / B(a, b), the expectation the
    unbiased estimator C(c, k) / C(n, k) estimates (Yao et al. 2024, τ-bench, arXiv 2406.12045)."""

    always: float
    never: float
    a: float
    b: float

    def rates(self, rng: random.Random, cases: int) -> list[float]:
        drawn = []
        for _ in range(cases):
            u = rng.random()
            drawn.append(
                1.0 if u < self.always else 0.0 if u < self.always + self.never else rng.betavariate(self.a, self.b)
            )
        return drawn

    def pass_k(self, k: int) -> float:
        ratio = 1.0
        for j in range(k):
            ratio *= (self.a + j) / (self.a + self.b + j)
        return self.always + (1 - self.always - self.never) * ratio


# Least squares on the τ-bench README's pass^1–4 tables (sierra-research/tau-bench), grid step 0.01 / 0.1:
# retail, tool-calling gpt-4o: 0.604 0.491 0.430 0.383 (fit: 0.604 0.493 0.428 0.384; pass^8 0.29, the paper's
# figure a little under 0.25); airline, tool-calling claude-3.5-sonnet-20240620: 0.360 0.224 0.169 0.139 (fit:
# 0.360 0.225 0.168 0.139; pass^8 0.09). The reward is a database-state check: no judge noise on top.
TAU_RETAIL = PassKFit(always=0.07, never=0.15, a=1.3, b=0.6)
TAU_AIRLINE = PassKFit(always=0.06, never=0.04, a=0.7, b=1.4)


def observed(rate: float, runs: int, rng: random.Random) -> list[float]:
    seen = rate * (1 - JUDGE_FLIP) + (1 - rate) * JUDGE_FLIP
    return [1.0 if rng.random() < seen else 0.0 for _ in range(runs)]


def diffuse(rates: list[float], drop: float, rng: random.Random) -> list[float]:
    mean_rate = statistics.fmean(rates)
    return [max(0.0, r - drop * r / mean_rate) for r in rates]


def concentrated(rates: list[float], drop: float, rng: random.Random) -> list[float]:
    current = list(rates)
    remaining = drop * len(rates)
    for index in rng.sample(range(len(rates)), len(rates)):
        if remaining <= 1e-12:
            break
        loss = min(0.5, current[index], remaining)
        current[index] -= loss
        remaining -= loss
    return current


def most_reliable(rates: list[float], drop: float, rng: random.Random) -> list[float]:
    """The change breaks the most reliable cases outright, as many as make `drop` of the suite's cases (three of
    30 for 10 points): the regression a per-case test should see at once, and a mean test drowns."""
    current = list(rates)
    for index in sorted(range(len(rates)), key=lambda i: -rates[i])[: round(drop * len(rates))]:
        current[index] = 0.0
    return current


class SimulatedJudge:
    """Turns true pass rates into observed 0/1 verdicts, one run (all cases) at a time; `flip` is the judge's
    share of flipped verdicts (0 for a deterministic check)."""

    def __init__(self, rng: random.Random, correlated: bool = False, flip: float = JUDGE_FLIP):
        self.rng, self.correlated, self.flip = rng, correlated, flip

    def run(self, rates: list[float]) -> list[float]:
        flip = 0.20 if self.correlated and self.rng.random() < 0.2 else self.flip
        return [1.0 if self.rng.random() < r * (1 - flip) + (1 - r) * flip else 0.0 for r in rates]

    def runs(self, rates: list[float], count: int) -> list[list[float]]:
        """Per case, `count` samples; each run shares one judge across cases."""
        columns = [self.run(rates) for _ in range(count)]
        return [[column[i] for column in columns] for i in range(len(rates))]


@dataclass(frozen=True)
class Outcome:
    regressed: bool  # the gate's verdict
    unconfirmed: bool  # an inconclusive drop the design could not have confirmed (gate.unconfirmed)
    runs_per_case: float  # the pull request's runs, averaged over cases


@dataclass(frozen=True)
class Noise:
    """A noise model: the cases' true pass rates, whether one judge's mood spans a whole run, its flip rate."""

    rates_for: Rates = true_pass_rates
    correlated: bool = False
    flip: float = JUDGE_FLIP


def simulate_pr(
    rng: random.Random,
    design: Design,
    drop: float,
    *,
    noise: Noise = Noise(),
    model: Drop = concentrated,
    significant: int | None = None,
) -> Outcome:
    """One pull request against a baseline pushed as `design` says. `significant`: the design's
    `smallest_significant`, passed in so that many pull requests compute it once."""
    judge = SimulatedJudge(rng, noise.correlated, noise.flip)
    base_rates = noise.rates_for(rng, design.cases)
    current_rates = model(base_rates, drop, rng) if drop else base_rates
    baseline = judge.runs(base_rates, design.baseline_runs)
    first = judge.runs(current_rates, design.first_runs)
    if not design.adaptive:
        strata = Strata(list(zip(baseline, first, strict=True)), [], [])
        spent = float(design.first_runs)
    else:
        cut = design.baseline_runs // 2
        staged = [StagedPair(b, b[:cut], b[cut:], f, []) for b, f in zip(baseline, first, strict=True)]
        chosen = [i for i, pair in enumerate(staged) if not pair.selection or undecided(pair.selection, pair.first)]
        extra = judge.runs([current_rates[i] for i in chosen], design.max_runs - design.first_runs)
        for i, samples in zip(chosen, extra, strict=True):
            staged[i].extra = samples
        strata = Strata([(p.baseline, p.first + p.extra) for p in staged], [], [], staged)
        spent = design.first_runs + len(chosen) * (design.max_runs - design.first_runs) / design.cases
    row = decided_in_family(group_test(strata), design)
    unconfirmed = (
        row.verdict == "inconclusive"
        and row.delta is not None
        and row.delta < 0
        and is_unconfirmed(-row.delta, design.cases, significant)
    )
    return Outcome(row.verdict == "regressed", unconfirmed, spent)


def simulated_power(
    design: Design, drop: float = 0.10, prs: int = 200, seed: str = "power", *, target: float | None = None
) -> tuple[float, float, int]:
    """(share of pull requests the gate fails, runs per case, pull requests simulated) for a concentrated drop of
    `drop`, seeded.

    With a `target`, the number of pull requests adapts to the question "is the share at least `target`": it stops
    after a batch of 50 once the share is three standard errors from it (which keeps `init` fast on candidates
    nowhere near), else after `prs` once it is two away, else at twice `prs`."""
    rng = random.Random(f"{seed}-{design}-{drop}")
    significant = smallest_significant(design)
    outcomes: list[Outcome] = []
    while True:
        outcomes += [simulate_pr(rng, design, drop, significant=significant) for _ in range(50)]
        share = statistics.fmean(o.regressed for o in outcomes)
        enough = len(outcomes) >= prs
        if target is not None:
            error = (0.25 / len(outcomes)) ** 0.5
            enough = abs(share - target) > (2 if enough else 3) * error or len(outcomes) >= 2 * prs
        if enough:
            return share, statistics.fmean(o.runs_per_case for o in outcomes), len(outcomes)


# `init`'s candidates, cheapest first (runs per case on an unchanged agent, docs/adaptive-runs.md): a first round of
# 2 already sees a broken case; past {2, 10} a third first-round run buys more power than a larger max. None spends
# more than 5 runs a case on an unchanged agent (a first round of 4 would, whatever the max).
INIT_RANGES = ((2, 4), (2, 6), (2, 10), (3, 10), (3, 12))
# What a suite too small for the target gets: the calibrated default, whose note says what it can detect.
FALLBACK_RANGE = (2, 10)
TARGET_POWER = 0.90
NEAR = 0.15  # a suite whose best range comes this close to the target gets that range
TARGET_DROP = 0.10


@dataclass(frozen=True)
class Sizing:
    design: Design
    power: float  # share of simulated 10-point concentrated drops the gate fails on
    runs_per_case: float
    confirms: int | None  # power.smallest_confirmable
    simulated: int = 0  # pull requests the share is from

    @property
    def enough(self) -> bool:
        """The target met by a standard error's margin: a borderline design is not chosen on the simulation's own
        luck (a design at 76% measured 82% on 300 pull requests before this margin)."""
        return self.simulated > 0 and self.power - (0.25 / self.simulated) ** 0.5 >= TARGET_POWER

    def note(self) -> str:
        """One line for the config: what the range buys, computed."""
        d = self.design
        caught = f"catches a {TARGET_DROP * 100:.0f}-point concentrated drop {self.power:.0%} of the time"
        if self.confirms is None:
            confirms = "confirms no drop"
        else:
            confirms = f"confirms {self.confirms} broken case{'s' if self.confirms != 1 else ''}"
        if self.enough:
            return f"{d.cases} cases: {caught} ({self.runs_per_case:.1f} runs per case then)"
        return f"{d.cases} cases are too few for {TARGET_POWER:.0%} power: {caught}; {confirms}"


def size_runs(cases: int, family: int, alpha: float, tolerance: float, prs: int | None = None) -> Sizing:
    """The cheapest of `INIT_RANGES` whose simulated power for a 10-point concentrated drop reaches 90% (by a
    standard error's margin); else the most powerful of them when it comes within `NEAR` of that, else
    `FALLBACK_RANGE`; the note says what it can detect. Seeded: the same suite always gets the same answer."""
    prs = prs or 150

    def sized(first: int, most: int, give_up: bool) -> Sizing:
        design = Design(max(1, cases), most, first, most, alpha, tolerance, family)
        power, runs, simulated = simulated_power(
            design, TARGET_DROP, prs, "init", target=TARGET_POWER if give_up else None
        )
        return Sizing(design, power, runs, smallest_confirmable(design), simulated)

    tried = []
    for first, most in INIT_RANGES:
        sizing = sized(first, most, give_up=True)
        if sizing.enough:
            return sizing
        tried.append(sizing)
    best = max(tried, key=lambda t: t.power)
    # near the target, the most powerful range tried; a suite nowhere near it gains nothing from more runs
    return best if best.power >= TARGET_POWER - NEAR else sized(*FALLBACK_RANGE, give_up=False)
