"""Runs every LLM-judged criterion of every case and run at once, through the run's single judge pool."""

from __future__ import annotations

import asyncio
import dataclasses
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TextIO

from adk_eval_gate.core.keys import CaseKey
from adk_eval_gate.core.progress import ProgressLine
from adk_eval_gate.criteria.engine.criterion import (
    Cause,
    MetricOutcome,
    NotEvaluable,
    SomeCriterion,
    UnparseableReply,
)
from adk_eval_gate.criteria.engine.judge import Judge
from adk_eval_gate.criteria.engine.rejudging import rejudged
from adk_eval_gate.criteria.engine.scoring import scoring_input
from adk_eval_gate.criteria.judge_agreement import DeferredJudgement
from adk_eval_gate.evalsets.adk_eval_schema import EvalCase
from adk_eval_gate.llm.client import LlmUnavailable, UsageStats
from adk_eval_gate.targets.case_run import CaseRun, one_line


@dataclass(frozen=True)
class JudgeJob:
    key: CaseKey  # (agent, eval_set_id, eval_id)
    case: EvalCase
    run: CaseRun
    criterion: SomeCriterion


async def _one(job: JudgeJob, client: Judge) -> tuple[MetricOutcome, list[DeferredJudgement]]:
    """The job's outcome, and the invocations it kept for re-judging (a Judge of its own collects them)."""
    if not isinstance(client, Judge) or client.rejudge is None or client.rejudge.extra <= 0:
        return await _judged(job, client), []  # no re-judging (a code metric's run has no judge at all)
    own = dataclasses.replace(client, deferred=[])
    outcome = await _judged(job, own)
    return outcome, own.deferred or []


async def _judged(job: JudgeJob, client: Judge) -> MetricOutcome:
    count = len(job.run.invocations or ())
    try:
        data = scoring_input(job.criterion, job.case, job.run)
    except NotEvaluable as exc:
        return MetricOutcome.not_evaluated(str(exc), count)
    assert job.criterion.spec.judge_scorer is not None
    try:
        return await job.criterion.spec.judge_scorer(data, job.criterion.options, client)
    except NotEvaluable as exc:
        return MetricOutcome.not_evaluated(str(exc), count)
    except LlmUnavailable as exc:
        return MetricOutcome.missing(str(exc), Cause(exc.cause), count)
    except UnparseableReply as exc:
        return MetricOutcome.error(str(exc), Cause.UNPARSEABLE_REPLY, count)
    except Exception as exc:  # e.g. a credentials library refusing: one criterion of one case, never the run
        return MetricOutcome.error(
            f"{job.criterion.name} could not be judged: {one_line(exc)}", Cause.INTERNAL_ERROR, count
        )


async def judge_all(
    jobs: Sequence[JudgeJob], client: Judge, progress: JudgeProgress | None = None
) -> dict[CaseKey, dict[tuple[int, str], MetricOutcome]]:
    async def tracked(job: JudgeJob) -> tuple[MetricOutcome, list[DeferredJudgement]]:
        outcome = await _one(job, client)
        if progress is not None:
            progress.update()
        return outcome

    first = await asyncio.gather(*(tracked(job) for job in jobs))
    # Re-judging only once every judgement ADK's scores need is in: it never takes a call or a budget from them
    policy = client.rejudge if isinstance(client, Judge) else None  # a code metric's run has no judge
    outcomes = (
        await asyncio.gather(*(rejudged(outcome, later, policy) for outcome, later in first))
        if policy is not None and policy.extra > 0
        else [outcome for outcome, _ in first]
    )
    by_case: dict[CaseKey, dict[tuple[int, str], MetricOutcome]] = {}
    for job, outcome in zip(jobs, outcomes, strict=True):
        by_case.setdefault(job.key, {})[(job.run.run, job.criterion.name)] = outcome
    return by_case


class JudgeProgress:
    def __init__(
        self,
        total: int,
        stats: Mapping[str, UsageStats],
        quiet: bool,
        stream: TextIO | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.stats = stats
        self.line = ProgressLine(total, quiet, stream, clock)

    def update(self) -> None:
        self.line.advance(self._describe)

    def _describe(self) -> str:
        total = UsageStats.total(self.stats.values())
        return (
            f"judging: {self.line.done}/{self.line.total} scored, {total.calls} model calls "
            f"({total.cache_hits} cached, {total.failures} failed)"
        )
