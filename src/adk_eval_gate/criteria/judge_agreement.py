"""How much an LLM judge disagrees with itself: the figures of judge noise, and what re-judging is handed.

A judged criterion asks its judge `num_samples` times per invocation (ADK's rule) and keeps the majority as the
invocation's score; those samples are also repeated judgements of the same invocation, so they say how often the
judge changes its mind. The **flip rate** of a set of invocations is the chance that two judgements of the same
invocation disagree: per invocation, the share of its pairs of judgements that differ (for values between 0 and 1,
the mean absolute difference over its pairs, which is the same thing for 0/1 labels), pooled over every pair of
every invocation. It is an unbiased estimate of 2·q·(1−q) for an invocation the judge calls valid with chance q.

Nothing here calls a model: `criteria/engine/rejudging.py` asks for the extra judgements, `run/rejudge.py` decides
whether the run may pay for them.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass
from itertools import combinations


@dataclass(frozen=True)
class JudgeAgreement:
    """The judge's self-agreement over some invocations: `pairs` pairs of judgements compared, `flips` their summed
    disagreement (a pair of 0/1 labels adds 0 or 1). `judgements`: every judgement counted."""

    judgements: int
    pairs: int
    flips: float

    @property
    def flip_rate(self) -> float | None:
        """None when no invocation had two judgements: one judgement says nothing about its judge's noise."""
        return self.flips / self.pairs if self.pairs else None

    def __add__(self, other: JudgeAgreement) -> JudgeAgreement:
        return JudgeAgreement(self.judgements + other.judgements, self.pairs + other.pairs, self.flips + other.flips)


NO_JUDGE_AGREEMENT = JudgeAgreement(0, 0, 0.0)


def agreement(judgements: Sequence[float]) -> JudgeAgreement:
    """One invocation's judgements: every pair compared."""
    flips = sum(abs(a - b) for a, b in combinations(judgements, 2))
    count = len(judgements)
    return JudgeAgreement(count, count * (count - 1) // 2, float(flips))


def pooled(per_invocation: Iterable[Sequence[float]]) -> JudgeAgreement:
    total = NO_JUDGE_AGREEMENT
    for judgements in per_invocation:
        total = total + agreement(judgements)
    return total


def disagree(judgements: Sequence[float]) -> bool:
    """The judgements of one invocation are not unanimous: its majority could have gone the other way."""
    return len(set(judgements)) > 1


def judge_mean(judgements: Sequence[float]) -> float | None:
    """The invocation's judge-averaged score: the mean of its judgements (its majority's noise averaged away)."""
    return sum(judgements) / len(judgements) if judgements else None


@dataclass(frozen=True)
class RejudgePolicy:
    """`extra`: judgements added to an invocation whose first `num_samples` disagree (0: never re-judge).
    `refusal`: why the run may not pay for another judge call now (the spending limit, the judge's budget), or
    None; asked before every extra call."""

    extra: int
    refusal: Callable[[], str | None]


@dataclass(frozen=True)
class DeferredJudgement:
    """An invocation whose judgements disagreed, kept for re-judging once every judgement ADK's score needs is in.
    `ask(i)` is the judge's reply to sample `i` (a distinct cache key per sample, as `num_samples` uses);
    `parse` reads a reply as a judgement (None: unreadable, not counted); `first` is the next sample index."""

    index: int  # the invocation's position in the run
    ask: Callable[[int], Awaitable[str]]
    parse: Callable[[str], float | None]
    first: int


def known(labels: Iterable[float | None]) -> tuple[float, ...]:
    """The judgements that could be read."""
    return tuple(label for label in labels if label is not None)
