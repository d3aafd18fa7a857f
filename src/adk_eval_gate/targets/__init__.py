"""Produce actual invocations for every case and run.

Names are imported on first use, so a light submodule (the agent host, started before the eval sets load) can
be imported without the eval-set models behind `build_target`.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pathlib import Path

    from adk_eval_gate.config.loader import AgentPlan
    from adk_eval_gate.targets.case_run import CaseRun, Target, TargetError, TransientTargetError
    from adk_eval_gate.targets.simulation import SimulationSettings


def build_target(agent: AgentPlan, base_dir: Path, simulation: SimulationSettings | None = None) -> Target:
    """Builds the agent's target; `await target.start()` before running cases."""
    from typing_extensions import assert_never

    from adk_eval_gate.config.target_settings import (
        AdkTargetSettings,
        CommandTargetSettings,
        HttpTargetSettings,
        ReplayTargetSettings,
    )

    match agent.settings.target:
        case ReplayTargetSettings():
            from adk_eval_gate.targets.replay import ReplayTarget

            return ReplayTarget.from_paths(agent.actuals_paths, base_dir)
        case AdkTargetSettings() as settings:
            from adk_eval_gate.targets.adk import AdkTarget

            return AdkTarget(settings.agent, base_dir, simulation, played=settings.model == "expected")
        case HttpTargetSettings() as settings:
            from adk_eval_gate.targets.http import HttpTarget

            return HttpTarget(settings, simulation=simulation)
        case CommandTargetSettings() as settings:
            from adk_eval_gate.targets.command import CommandTarget

            return CommandTarget(settings, base_dir)
        case unknown:  # the config schema admits no other kind; a new one fails the type check here
            assert_never(unknown)


def __getattr__(name: str) -> Any:
    if name in ("CaseRun", "Target", "TargetError", "TransientTargetError"):
        return getattr(importlib.import_module(".case_run", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["CaseRun", "Target", "TargetError", "TransientTargetError", "build_target"]
