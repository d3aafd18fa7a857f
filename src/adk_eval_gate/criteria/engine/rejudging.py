"""Re-judging: more judgements of the invocations whose first `num_samples` judgements disagreed.

It runs once every judgement ADK's score needs is in (judging.py), so it never takes a call from them. The extra
judgements feed the judge-noise estimate and the judge-averaged evidence, never the invocation's score, which stays
the majority of the first `num_samples` (ADK's). Each extra call asks the run first (`RejudgePolicy.refusal`: the
spending limit, the judge's budget); a call refused, failed or unreadable stops that invocation's re-judging and
says why in `InvocationScore.unjudged`: its case is then never called "within judge noise" (fail closed), and the
criterion's own score is untouched.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Sequence

from adk_eval_gate.criteria.engine.criterion import MetricOutcome, Status
from adk_eval_gate.criteria.judge_agreement import DeferredJudgement, RejudgePolicy
from adk_eval_gate.llm.client import LlmUnavailable
from adk_eval_gate.targets.case_run import one_line


async def more_judgements(later: DeferredJudgement, policy: RejudgePolicy) -> tuple[tuple[float, ...], str | None]:
    """Up to `policy.extra` further judgements of one invocation, one sample index after another (each its own cache
    key), and why it stopped short, if it did."""
    got: list[float] = []
    for sample in range(later.first, later.first + policy.extra):
        if refusal := policy.refusal():
            return tuple(got), refusal
        try:
            label = later.parse(await later.ask(sample))
        except LlmUnavailable as exc:
            return tuple(got), str(exc)
        except Exception as exc:  # a bug re-judging one invocation costs its noise estimate, never the run
            return tuple(got), f"re-judging failed: {one_line(exc)}"
        if label is None:
            return tuple(got), f"re-judgement {sample + 1} had no readable verdict"
        got.append(label)
    return tuple(got), None


async def rejudged(
    outcome: MetricOutcome, deferred: Sequence[DeferredJudgement], policy: RejudgePolicy
) -> MetricOutcome:
    """The outcome again, its deferred invocations carrying their extra judgements (a new outcome: never edited)."""
    if not deferred or policy.extra <= 0 or outcome.status in (Status.ERROR, Status.NOT_EVALUATED):
        return outcome
    answers = await asyncio.gather(*(more_judgements(later, policy) for later in deferred))
    per_invocation = list(outcome.per_invocation)
    for later, (extra, unjudged) in zip(deferred, answers, strict=True):
        if 0 <= later.index < len(per_invocation):
            item = per_invocation[later.index]
            per_invocation[later.index] = dataclasses.replace(
                item, judgements=item.judgements + extra, rejudged=len(extra), unjudged=unjudged
            )
    return dataclasses.replace(outcome, per_invocation=per_invocation)
