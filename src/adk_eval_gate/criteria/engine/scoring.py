"""Scores one case over all its runs, with ADK's aggregation rules.

* One run: a criterion's case score is the evaluator's own overall score (what `adk eval` reports).
* Several runs: the case score is the mean of every non-None per-invocation score of every run, pooled
  (AgentEvaluator's rule; not the mean of per-run scores). Every run's own outcome is kept.
* Case status (`adk eval`'s rule): any failed criterion fails the case; otherwise any passed criterion
  passes it; a not-evaluated criterion never fails a case. A run whose agent errored makes the case `error`,
  and so does a criterion that errored in any run (a judge that never answered, a reply that could not be read, a
  bug): its score is withheld, never compared, and the gate's default `fail_on: [error]` counts it.
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from adk_eval_gate.core.numbers import in_range, out_of_range
from adk_eval_gate.criteria.engine.criterion import (
    Cause,
    InvocationScore,
    MetricOutcome,
    NotEvaluable,
    ScoringInput,
    SomeCriterion,
    Status,
    status_for,
)
from adk_eval_gate.evalsets.adk_eval_schema import EvalCase
from adk_eval_gate.targets.case_run import CaseRun, one_line


@dataclass
class CriterionResult:
    name: str
    threshold: float
    score: float | None
    status: Status
    runs: list[MetricOutcome | None]  # None where the run errored before scoring
    reason: str | None = None
    cause: Cause | None = None

    def pooled_per_invocation(self) -> list[float | None]:
        """Per turn, the mean score over runs (None where no run produced one, and everywhere when the criterion
        errored: the runs that were judged keep their own scores, but no pooled number stands for the case)."""
        width = max((len(o.per_invocation) for o in self.runs if o), default=0)
        if self.status is Status.ERROR:
            return [None] * width
        pooled: list[float | None] = []
        for i in range(width):
            scores = [o.per_invocation[i].score for o in self.runs if o and i < len(o.per_invocation)]
            known = [s for s in scores if s is not None]
            pooled.append(statistics.mean(known) if known else None)
        return pooled


@dataclass
class CaseScore:
    eval_id: str
    status: Status
    criteria: list[CriterionResult] = field(default_factory=list)
    reason: str | None = None


def scoring_input(criterion: SomeCriterion, case: EvalCase, run: CaseRun) -> ScoringInput:
    """The scorer's input, or NotEvaluable when the data cannot support this criterion (ADK: NOT_EVALUATED)."""
    assert run.invocations is not None
    actual = list(run.invocations)
    expected = list(case.conversation) if case.conversation is not None else None
    if criterion.spec.needs_reference and expected is None:
        raise NotEvaluable("needs a reference conversation; this case only has a conversation_scenario")
    if expected is not None and len(expected) != len(actual):
        raise NotEvaluable(f"the agent produced {len(actual)} invocation(s) but the case expects {len(expected)}")
    return ScoringInput(case, actual, expected)


def evaluate_run(
    criterion: SomeCriterion,
    case: EvalCase,
    run: CaseRun,
    judged: Mapping[tuple[int, str], MetricOutcome] | None = None,
) -> MetricOutcome:
    count = len(run.invocations or ())
    return _bounded(_outcome(criterion, case, run, judged), count)


def _bounded(outcome: MetricOutcome, count: int) -> MetricOutcome:
    """A score past ±MAX_MAGNITUDE (a code metric's 1.7e308) is an error here, where every metric's scores enter:
    finite is not enough, since the means and sums the results and comparisons take would overflow."""
    scores = [outcome.score, *(s.score for s in outcome.per_invocation)]
    bad = next((v for v in scores if v is not None and not in_range(v)), None)
    if bad is None:
        return outcome
    return MetricOutcome.error(f"the metric answered score {out_of_range(bad)}", Cause.UNPARSEABLE_REPLY, count)


def _outcome(
    criterion: SomeCriterion,
    case: EvalCase,
    run: CaseRun,
    judged: Mapping[tuple[int, str], MetricOutcome] | None,
) -> MetricOutcome:
    spec = criterion.spec
    count = len(run.invocations or ())
    if judged is not None and (run.run, criterion.name) in judged:
        return judged[(run.run, criterion.name)]
    if spec.scorer is None:
        return MetricOutcome.not_evaluated(spec.unavailable_reason or "not available", count, Cause.UNSUPPORTED)
    try:
        return spec.scorer(scoring_input(criterion, case, run), criterion.options)
    except NotEvaluable as exc:
        return MetricOutcome.not_evaluated(str(exc), count)
    except Exception as exc:  # a bug scoring one case must neither crash the run nor pass as a quiet gap
        return MetricOutcome.error(
            f"{criterion.name} could not be scored: {one_line(exc)}", Cause.INTERNAL_ERROR, count
        )


def _pooled(
    criterion: SomeCriterion, outcomes: Sequence[MetricOutcome | None]
) -> tuple[float | None, str | None, Cause | None]:
    scored = [o for o in outcomes if o is not None]
    if not scored:
        return None, "no run produced invocations", None
    if len(outcomes) == 1:
        return scored[0].score, scored[0].reason, scored[0].cause
    values = [s.score for o in scored for s in o.per_invocation if s.score is not None]
    if not values:
        reasons = {o.reason for o in scored if o.reason}
        causes = [o.cause for o in scored if o.cause]
        return None, "; ".join(sorted(reasons)) or "no scores", causes[0] if causes else None
    return statistics.mean(values), None, None  # AgentEvaluator's exact call


def _errored(criterion: SomeCriterion, outcomes: Sequence[MetricOutcome | None]) -> CriterionResult | None:
    """A criterion that errored in any run has no case score: the other runs alone would be a biased sample."""
    errors = [(i, o) for i, o in enumerate(outcomes) if o is not None and o.status is Status.ERROR]
    if not errors:
        return None
    run, first = errors[0]
    where = f"run {run + 1} of {len(outcomes)}: " if len(outcomes) > 1 else ""
    return CriterionResult(
        criterion.name, criterion.threshold, None, Status.ERROR, list(outcomes), f"{where}{first.reason}", first.cause
    )


def case_status(results: Sequence[CriterionResult]) -> Status:
    status = Status.NOT_EVALUATED
    for result in results:
        if result.status is Status.FAILED:
            return Status.FAILED
        if result.status is Status.PASSED:
            status = Status.PASSED
    return status


def score_case(
    case: EvalCase,
    runs: Sequence[CaseRun],
    criteria: Sequence[SomeCriterion],
    judged: Mapping[tuple[int, str], MetricOutcome] | None = None,
) -> CaseScore:
    """`judged` holds the LLM-judged outcomes, computed beforehand for every run (criteria/judging.py)."""
    results = []
    for criterion in criteria:
        outcomes = [evaluate_run(criterion, case, run, judged) if run.ok else None for run in runs]
        errored = _errored(criterion, outcomes)
        if errored is not None:
            results.append(errored)
            continue
        score, reason, cause = _pooled(criterion, outcomes)
        rule = criterion.spec.case_status  # custom metrics decide their own verdict, as ADK lets them
        status = rule(score, criterion.threshold, outcomes) if rule else status_for(score, criterion.threshold)
        results.append(CriterionResult(criterion.name, criterion.threshold, score, status, outcomes, reason, cause))
    errors = [run for run in runs if not run.ok]
    if errors:
        detail = errors[0].error or "no invocations"
        reason = detail if len(runs) == 1 else f"{len(errors)} of {len(runs)} runs errored: {detail}"
        return CaseScore(case.eval_id, Status.ERROR, results, reason)
    if failed_criteria := [r for r in results if r.status is Status.ERROR]:
        reason = "; ".join(f"{r.name}: {r.reason}" for r in failed_criteria)
        return CaseScore(case.eval_id, Status.ERROR, results, reason)
    status = case_status(results)
    reason = None
    if status is Status.FAILED:
        failed = [r for r in results if r.status is Status.FAILED]
        reason = ", ".join(f"{r.name} {_fmt(r.score)} < {r.threshold:g}" for r in failed)
    elif status is Status.NOT_EVALUATED:
        reason = "no criterion could be evaluated" + (f": {results[0].reason}" if results and results[0].reason else "")
    return CaseScore(case.eval_id, status, results, reason)


def _fmt(score: float | None) -> str:
    return "n/a" if score is None else f"{score:.4g}"


__all__ = ["CaseScore", "CriterionResult", "InvocationScore", "case_status", "evaluate_run", "score_case"]
