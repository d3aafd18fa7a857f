"""What a criterion is: a plain scoring function plus its options model, behind a registry."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import TYPE_CHECKING, Any, Generic, TypeAlias, TypeVar

from pydantic import BaseModel

from adk_eval_gate.core.json_types import JsonObject
from adk_eval_gate.evalsets.adk_eval_schema import EvalCase, Invocation

if TYPE_CHECKING:  # judge.py builds on this module
    from adk_eval_gate.criteria.engine.judge import Judge


class Status(str, Enum):
    PASSED = "passed"
    FAILED = "failed"
    NOT_EVALUATED = "not_evaluated"
    ERROR = "error"


class Cause(str, Enum):
    """Why a criterion has no score. The first four are designed absences (`not_evaluated`); the rest mean
    something broke, so the criterion is an `error` that gates: a gate that cannot know must not say green."""

    NO_CREDENTIALS = "no_credentials"  # a fork's pull request has no secrets
    BUDGET_SPENT = "budget_spent"
    UNSUPPORTED = "unsupported"  # a valid ADK criterion this build cannot run (`validate` says so)
    NOT_APPLICABLE = "not_applicable"  # the case's data does not allow it (ADK: NOT_EVALUATED)
    JUDGE_UNAVAILABLE = "judge_unavailable"  # still failing after the retries, or refused the request
    UNPARSEABLE_REPLY = "unparseable_reply"
    INTERNAL_ERROR = "internal_error"

    @property
    def designed(self) -> bool:
        return self in _DESIGNED


_DESIGNED = frozenset({Cause.NO_CREDENTIALS, Cause.BUDGET_SPENT, Cause.UNSUPPORTED, Cause.NOT_APPLICABLE})


def status_for(score: float | None, threshold: float) -> Status:
    """ADK's rule for every built-in metric: higher is better, pass at `score >= threshold`."""
    if score is None:
        return Status.NOT_EVALUATED
    return Status.PASSED if score >= threshold else Status.FAILED


def running_mean(scores: list[float]) -> float:
    """Left-to-right accumulation, as ADK's evaluators do it. Not `sum()`: from Python 3.12 `sum()` of floats
    is compensated and can differ from ADK in the last digit."""
    total = 0.0
    for score in scores:
        total += score
    return total / len(scores)


@dataclass(frozen=True)
class InvocationScore:
    score: float | None
    status: Status
    detail: str | None = None
    # A sampled judge's readable judgements of this invocation, the first num_samples then any re-judging's (the
    # score stays the majority of the first: ADK's); `unjudged`: why re-judging stopped short, when it did.
    judgements: tuple[float, ...] = ()
    rejudged: int = 0  # how many of `judgements` re-judging added
    unjudged: str | None = None


@dataclass
class MetricOutcome:
    """One criterion applied to one run of one case."""

    score: float | None
    status: Status
    per_invocation: list[InvocationScore] = field(default_factory=list)
    reason: str | None = None
    cause: Cause | None = None  # set exactly when there is no score

    @classmethod
    def not_evaluated(cls, reason: str, invocations: int = 0, cause: Cause = Cause.NOT_APPLICABLE) -> MetricOutcome:
        placeholders = [InvocationScore(None, Status.NOT_EVALUATED)] * invocations
        return cls(None, Status.NOT_EVALUATED, placeholders, reason, cause)

    @classmethod
    def error(cls, reason: str, cause: Cause, invocations: int = 0) -> MetricOutcome:
        """No per-turn score survives: a partly judged criterion must never be compared as if it were whole."""
        return cls(None, Status.ERROR, [InvocationScore(None, Status.ERROR, reason)] * invocations, reason, cause)

    @classmethod
    def missing(cls, reason: str, cause: Cause, invocations: int = 0) -> MetricOutcome:
        if cause.designed:
            return cls.not_evaluated(reason, invocations, cause)
        return cls.error(reason, cause, invocations)


@dataclass(frozen=True)
class ScoringInput:
    case: EvalCase
    actual: Sequence[Invocation]
    expected: Sequence[Invocation] | None


class NotEvaluable(ValueError):
    """The data does not allow this criterion (ADK raises ValueError and reports NOT_EVALUATED)."""


class UnparseableReply(Exception):
    """No judge reply of a criterion could be read: the criterion errors rather than pass unjudged."""


class CriterionOptions(BaseModel):
    """What every criterion's options hold (engine/options.py has ADK's): the threshold its score is held to."""

    threshold: float


# A criterion's options model, as ADK binds `criterion_type` to a metric: its scorer takes exactly these options.
OptionsT = TypeVar("OptionsT", bound=CriterionOptions)

Scorer = Callable[[ScoringInput, OptionsT], MetricOutcome]
JudgeScorer = Callable[[ScoringInput, OptionsT, "Judge"], Awaitable[MetricOutcome]]  # (input, options, the judge)
# (the case's pooled score, threshold, every run's outcome) → its status, for a criterion that decides its own.
CaseStatusRule = Callable[[float | None, float, Sequence["MetricOutcome | None"]], Status]


@dataclass(frozen=True)
class CriterionSpec(Generic[OptionsT]):
    """A criterion: its name, its options model and the scorer of exactly those options (checked where built)."""

    name: str
    options_model: type[OptionsT]
    scorer: Scorer[OptionsT] | None
    summary: str
    needs_reference: bool = False
    judged: bool = False
    # Set when the criterion is a valid ADK name that this build cannot score yet.
    unavailable_reason: str | None = None
    judge_scorer: JudgeScorer[OptionsT] | None = None
    # How the case's pooled score becomes a status when the criterion is not ADK's `score >= threshold` (custom
    # metrics decide themselves): (score, threshold, every run's outcome) -> status.
    case_status: CaseStatusRule | None = None

    def __post_init__(self) -> None:
        """A criterion is scored one way: in process (`scorer`), by a judge or a metric's own code (`judge_scorer`,
        run with the judges), or not at all in this build (`unavailable_reason`). A spec naming two ways, or none,
        would be scored by whichever the pipeline looks at first, or pass as a quiet gap: refused when built."""
        ways = [self.scorer is not None, self.judge_scorer is not None, self.unavailable_reason is not None]
        if sum(ways) != 1:
            raise ValueError(f"criterion {self.name!r}: give exactly one of scorer, judge_scorer, unavailable_reason")
        if self.judged and self.judge_scorer is None:
            raise ValueError(f"criterion {self.name!r}: a judged criterion is scored by its judge_scorer")
        if self.case_status is not None and self.unavailable_reason is not None:
            raise ValueError(f"criterion {self.name!r}: an unavailable criterion has no status of its own")
        if not self.name.strip():
            raise ValueError("a criterion needs a name")


@dataclass(frozen=True)
class ConfiguredCriterion(Generic[OptionsT]):
    """A criterion name resolved against the registry, with validated options."""

    spec: CriterionSpec[OptionsT]
    options: OptionsT

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def threshold(self) -> float:
        return self.options.threshold

    def options_json(self) -> JsonObject:
        return self.options.model_dump(mode="json", exclude_defaults=False)


# Specs and criteria of every options model side by side (the registry, a plan): each was checked where it was built
# (`CriterionSpec(name, Options, scorer)` binds the scorer to its options); held together they are of some options.
SomeCriterionSpec: TypeAlias = "CriterionSpec[Any]"
SomeCriterion: TypeAlias = "ConfiguredCriterion[Any]"
