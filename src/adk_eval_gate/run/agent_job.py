"""A job that names the agent it was planned for: a run's rounds, judges, spending limit, early scores and history
join its runs to their agent on that name (unique in a config), never on the target object's identity — an `id()`
can be reused once an object is gone, and would then join another agent's runs (issue #30)."""

from __future__ import annotations

from dataclasses import dataclass

from adk_eval_gate.targets.runner import Job


@dataclass(frozen=True)
class AgentJob(Job):
    """A target's job (the runner and worker pools take it as any job), with the name of the plan's agent."""

    agent: str
