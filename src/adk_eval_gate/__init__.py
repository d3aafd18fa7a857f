"""adk-eval-gate: gate pull requests on Google ADK agent evaluations."""

from __future__ import annotations

from typing import Any

from adk_eval_gate.core.version import __version__

__all__ = ["AgentEvaluator", "__version__"]


def __getattr__(name: str) -> Any:
    # Lazy, so `import adk_eval_gate` (the CLI's first line) does not import google-adk.
    if name == "AgentEvaluator":
        from adk_eval_gate.integrations.agent_evaluator import AgentEvaluator

        return AgentEvaluator
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
