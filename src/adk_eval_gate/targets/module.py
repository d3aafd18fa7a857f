"""The agent as AgentEvaluator names it: an importable module, resolved exactly as ADK 2.13's
`AgentEvaluator._get_agent_for_eval` resolves it (an App or a root agent, optionally a named sub-agent)."""

from __future__ import annotations

import importlib
import os
from pathlib import Path
from typing import Any

from adk_eval_gate.targets.adk import AdkTarget


class ModuleTarget(AdkTarget):
    """The agent as AgentEvaluator finds it: an importable module name, not a folder or `module:attribute`."""

    def __init__(self, agent_module: str, agent_name: str | None, artifact_service: object = None) -> None:
        super().__init__(agent_module, Path.cwd())
        self._agent_name = agent_name
        self._artifact_service = artifact_service

    def preload(self) -> None:
        os.environ.setdefault("ADK_CAPTURE_MESSAGE_CONTENT_IN_SPANS", "false")

    def host_agent(self) -> None:
        return None  # runs in the test's own process, where its fixtures and monkeypatches live

    async def start(self) -> None:
        await super().start()
        if self._artifact_service is not None:
            self._artifacts = self._artifact_service

    async def _load(self) -> tuple[Any, Any]:
        return await agent_for_eval(self._reference, self._agent_name)


async def agent_for_eval(module_name: str, agent_name: str | None = None) -> tuple[Any, Any]:
    """(App or None, agent to evaluate), resolved exactly as ADK 2.13's `AgentEvaluator._get_agent_for_eval`."""
    from google.adk.apps.app import App

    module = importlib.import_module(module_name)
    if not (hasattr(module, "agent") or module_name.endswith(".agent")):
        raise ValueError(
            f"Module {module_name} does not have a member named `agent` or the name should endwith `.agent`."
        )
    holder = getattr(module, "agent", module)
    root = getattr(holder, "root_agent", None)
    if root is None:
        factory = getattr(holder, "get_agent_async", None)
        if not callable(factory):
            raise ValueError(f"Module {module_name} does not have a root_agent or get_agent_async method.")
        root, _ = await factory()
    app = getattr(holder, "app", None)
    app = app if isinstance(app, App) else None
    if agent_name:
        found = root.find_agent(agent_name)
        if found is None:
            raise ValueError(f"Sub-Agent {agent_name!r} not found.")
        root = found
    return app, root
