"""Stage 3: produce actual invocations for every case and run."""

from __future__ import annotations

from ..config.loader import AgentPlan
from .base import CaseRun, Target
from .replay import ReplayTarget


def build_target(agent: AgentPlan) -> Target:
    kind = agent.settings.target.kind
    if kind == "replay":
        return ReplayTarget.from_paths(agent.actuals_paths)
    raise AssertionError(f"unhandled target kind {kind!r}")  # the config schema admits no other kind


__all__ = ["CaseRun", "Target", "build_target"]
