"""What a judged criterion is handed: the run's shared model client and the prompt templates in force."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from dataclasses import dataclass, field
from typing import TypeVar

import jinja2

from adk_eval_gate.core.json_types import JsonObject
from adk_eval_gate.criteria.engine.metric_process import MetricProcess
from adk_eval_gate.criteria.engine.prompts import TEMPLATES
from adk_eval_gate.criteria.judge_agreement import DeferredJudgement, RejudgePolicy
from adk_eval_gate.llm.client import CAUSE_BUDGET, CAUSE_NO_CREDENTIALS, Ask, LlmClient, LlmUnavailable

T = TypeVar("T")


@dataclass
class Judge:
    llm: LlmClient
    templates: jinja2.Environment = field(default=TEMPLATES)
    # The pull request's custom metric functions, when they run apart from this process (a token is held): the
    # run's one process, owned here and ended by `close` when the run ends (metric_process.py).
    metric_process: MetricProcess = field(default_factory=MetricProcess, compare=False, repr=False)
    rejudge: RejudgePolicy | None = None  # None or extra 0: no invocation is judged beyond num_samples
    # One judged job's invocations to re-judge (judging.py hands each job a Judge of its own with a list here)
    deferred: list[DeferredJudgement] | None = None

    def defer(self, later: DeferredJudgement) -> None:
        """Keeps an invocation whose judgements disagreed for re-judging, when this run re-judges."""
        if self.deferred is not None and self.rejudge is not None and self.rejudge.extra > 0:
            self.deferred.append(later)

    @property
    def available(self) -> bool:
        return self.llm.available

    async def generate(
        self, criterion: str, model: str, prompt: str, config: JsonObject | None, sample: int, version: str
    ) -> str:
        return await self.llm.generate(Ask(criterion, model, prompt, config, sample, version))

    def render(self, template: str, **values: object) -> str:
        return self.templates.get_template(template).render(**values)

    def close(self) -> None:
        """The run is over: what it started for its judges ends (the metric process)."""
        self.metric_process.close()


def _severity(exc: BaseException) -> int:
    if not isinstance(exc, Exception):
        return 0  # cancellation and interrupts go first, untouched
    if isinstance(exc, LlmUnavailable) and exc.cause in (CAUSE_NO_CREDENTIALS, CAUSE_BUDGET):
        return 3
    return 2 if isinstance(exc, LlmUnavailable) else 1


async def gather_all(*calls: Awaitable[T]) -> list[T]:
    """Every call finishes (their answers are cached for the next run); then the worst failure, if any, is raised:
    a bug before a broken judge before a designed absence, so one missing key never hides a real fault."""
    results = await asyncio.gather(*calls, return_exceptions=True)
    failures = [r for r in results if isinstance(r, BaseException)]
    if failures:
        raise min(failures, key=_severity)
    return list(results)  # type: ignore[arg-type]
