"""What running an agent produces: the actual invocations of one case in one run, or why there are none."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

from adk_eval_gate.core.clip import clip, single_line
from adk_eval_gate.core.json_types import JsonObject
from adk_eval_gate.evalsets.adk_eval_schema import EvalCase, Invocation
from adk_eval_gate.llm.client import UsageStats


@dataclass(frozen=True)
class CaseRun:
    eval_set_id: str
    eval_id: str
    run: int
    invocations: tuple[Invocation, ...] | None
    error: str | None = None
    duration_seconds: float = 0.0
    # Model calls of the user simulator for this case and run (conversation_scenario cases only).
    simulator_usage: UsageStats | None = None
    # `invocations` as dump_invocation gives them, when a worker process sent them so: not dumped again.
    dumped: tuple[JsonObject, ...] | None = field(default=None, compare=False, repr=False)

    @property
    def ok(self) -> bool:
        return self.error is None and self.invocations is not None


class TargetError(Exception):
    """A case could not be run; the message is shown to the user as the case's one-line reason."""


class TransientTargetError(TargetError):
    """Worth retrying: a 429/5xx, a dropped connection, a timeout of one request."""


class Target(Protocol):
    """Produces actual invocations for one case and run (replaying, or running an agent)."""

    kind: str

    async def start(self) -> None: ...

    async def run_case(self, eval_set_id: str, case: EvalCase, run: int) -> CaseRun: ...

    async def aclose(self) -> None: ...


def one_line(exc: BaseException) -> str:
    text = single_line(str(exc))  # masked before the join and the cut
    name = type(exc).__name__
    if not text:
        return name
    if isinstance(exc, TargetError) or type(exc).__module__.startswith("adk_eval_gate"):
        return clip(text, 400)
    return clip(f"{name}: {text}", 400)
