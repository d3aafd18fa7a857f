"""`--offline`: the workflow with every `adk` agent's model played from the eval set's expected turns.

A first run needs no key and no network (targets/expected_model.py). Such a run tests tools, wiring and scoring,
never the model, so it must never pass a real gate by accident: the run has no baseline store (nothing is loaded
to compare with, nothing is stored), its results file says `offline` with OFFLINE_LABEL, and a results file so
marked is refused as a baseline and as either side of a comparison with a real one (results/offline.py).
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

from adk_eval_gate.config.workflow_settings import NoBaseline
from adk_eval_gate.core.errors import InputError

if TYPE_CHECKING:
    from adk_eval_gate.config.loader import Workflow

OFFLINE_LABEL = (
    "offline: the model was played from the eval set's expected turns — this tests tools, wiring and scoring, "
    "not the model"
)
OFFLINE_COMMAND = "adk-eval-gate ci --offline"
# What an offline run's gate fails on besides the config's own conditions (its verdict is its thresholds).
OFFLINE_FAILS_ON = ("threshold", "error")


def is_offline(workflow: Workflow) -> bool:
    """Whether any agent's model is played (`--offline`, or `target.model: expected` in the config)."""
    return any(a.settings.target.kind == "adk" and a.settings.target.model == "expected" for a in workflow.agents)


def played_offline(workflow: Workflow, every_agent: bool = True) -> Workflow:
    """The workflow as `--offline` runs it (`every_agent`): every `adk` agent played, `replay` agents as they are
    (they call no model); an `http` or `command` agent runs its model where we cannot reach it: refused. Whenever
    an agent is played (by the flag or the config's `target.model: expected`) the run has no baseline store."""
    if not every_agent:
        return _without_baseline(workflow) if is_offline(workflow) else workflow
    agents = []
    for agent in workflow.agents:
        target = agent.settings.target
        if target.kind in ("http", "command"):
            raise InputError(
                workflow.path,
                f"agents[{agent.index}].target.kind",
                f"{agent.name}: an {target.kind} target runs its own model, which --offline cannot play",
                "run --offline with a config of `adk` (or `replay`) agents only, or set the key and run without it",
            )
        if target.kind == "adk":
            played = target.model_copy(update={"model": "expected"})
            agent = dataclasses.replace(agent, settings=agent.settings.model_copy(update={"target": played}))
        agents.append(agent)
    return _without_baseline(dataclasses.replace(workflow, agents=tuple(agents)))


def _without_baseline(workflow: Workflow) -> Workflow:
    """No baseline store, and the gate decided by the thresholds: with nothing to compare, a case that misses its
    thresholds (or cannot run) is what an offline run has to say, so the headline, the comment and the exit code
    all say FAIL for it, never "passed, no baseline" above a failing line."""
    gate = workflow.settings.gate
    fail_on = [*gate.fail_on, *(c for c in OFFLINE_FAILS_ON if c not in gate.fail_on)]
    settings = workflow.settings.model_copy(
        update={"baseline": NoBaseline(store="none"), "gate": gate.model_copy(update={"fail_on": fail_on})}
    )
    return dataclasses.replace(workflow, settings=settings)
