"""Which metrics an eval file gets when agents-cli is involved: its `eval_config.yaml`, and our `thresholds:`.

* An agents-cli config (`.yaml`/`.yml`, or JSON with `metrics_to_run`) given as the agent's `eval_config` is read
  with agents-cli's rules; its metrics become criteria (criteria/agents_cli_metrics.py).
* An agents-cli dataset with neither `eval_config` nor inline `criteria` takes agents-cli's default config,
  `eval_config.yaml` in its folder's parent (`tests/eval/` for `tests/eval/datasets/`), as `eval grade` does.
* ADK criteria (inline or an ADK eval_config.json) also work on agents-cli datasets: their cases are ADK cases.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Protocol

from adk_eval_gate.config.loader import AgentPlan, Workflow
from adk_eval_gate.core.errors import InputError
from adk_eval_gate.core.paths import relative_posix
from adk_eval_gate.criteria.agents_cli_metrics import resolve_agents_cli_metrics
from adk_eval_gate.criteria.engine.criterion import SomeCriterion
from adk_eval_gate.evalsets.adk_eval_schema import EvalCase
from adk_eval_gate.evalsets.agents_cli_config import is_agents_cli_config, parse_agents_cli_config, read_config_data
from adk_eval_gate.evalsets.eval_config import EvalConfigData
from adk_eval_gate.evalsets.loader import EvalSetFile
from adk_eval_gate.results.results_format import ResultsFile


# What these functions read of a `plan.Plan`, named structurally: plan.py imports this module.
class _EvalSetOfPlan(Protocol):
    @property
    def eval_set_id(self) -> str: ...
    @property
    def file(self) -> EvalSetFile: ...


class _AgentOfPlan(Protocol):
    @property
    def name(self) -> str: ...
    @property
    def eval_sets(self) -> Sequence[_EvalSetOfPlan]: ...


class _Plan(Protocol):
    @property
    def agents(self) -> Sequence[_AgentOfPlan]: ...


DEFAULT_CONFIG = "eval_config.yaml"


def _config_path(agent: AgentPlan, loaded: EvalSetFile, workflow: Workflow) -> Path | None:
    if agent.eval_config_path is not None:
        return agent.eval_config_path
    if agent.settings.criteria is not None or loaded.shape != "agents_cli":
        return None
    default = loaded.path.parent.parent / DEFAULT_CONFIG
    if not default.is_file():
        shown = relative_posix(workflow.base_dir, default)
        raise InputError(
            workflow.path,
            f"agents[{agent.index}].eval_config",
            f"is not set, and agents-cli's default {shown} does not exist for dataset "
            f"{relative_posix(workflow.base_dir, loaded.path)}",
            "set eval_config to the agents-cli eval_config.yaml, or give inline criteria",
            line=workflow.lines(("agents", agent.index)),
        )
    return default


def agents_cli_criteria(
    workflow: Workflow, agent: AgentPlan, loaded: EvalSetFile
) -> tuple[EvalConfigData, tuple[SomeCriterion, ...]] | None:
    """The criteria when the eval config is agents-cli's; None when ADK's rules apply."""
    thresholds_loc = ("agents", agent.index, "thresholds")
    path = _config_path(agent, loaded, workflow)
    data, lines = read_config_data(path) if path is not None else (None, None)
    if path is None or not is_agents_cli_config(data, path, adk_cases=loaded.shape != "agents_cli"):
        if agent.settings.thresholds is not None:
            raise InputError(
                workflow.path,
                f"agents[{agent.index}].thresholds",
                "applies to agents-cli metrics only, and this agent's eval config is not agents-cli's",
                "give ADK criteria their thresholds under `criteria`, or point eval_config at eval_config.yaml",
                line=workflow.lines(thresholds_loc),
            )
        return None
    config = parse_agents_cli_config(data, path, lines)
    if loaded.shape != "agents_cli":
        raise InputError(
            loaded.path,
            None,
            f"is an ADK eval set, but agents-cli metrics ({relative_posix(workflow.base_dir, path)}) score "
            "agents-cli datasets only",
            "give this eval set ADK criteria (another agent entry), or convert it with `agents-cli scaffold upgrade`",
        )
    criteria = resolve_agents_cli_metrics(
        config, agent.settings.thresholds, str(workflow.path), thresholds_loc, workflow.lines, workflow.base_dir
    )
    summary = {c.name: c.threshold for c in criteria}
    return EvalConfigData(criteria=summary, source=str(path), warnings=config.warnings), tuple(criteria)


def agents_cli_cases(plan: _Plan) -> dict[tuple[str, str], tuple[EvalCase, ...]]:
    """(agent, eval set id) → the agents-cli cases of a plan (`plan.Plan`; not imported: plan.py imports this),
    for writing their traces in agents-cli's format."""
    return {
        (agent.name, eval_set.eval_set_id): tuple(eval_set.file.eval_set.eval_cases)
        for agent in plan.agents
        for eval_set in agent.eval_sets
        if eval_set.file.shape == "agents_cli"
    }


def named_like_the_plan(results: ResultsFile, plan: _Plan) -> ResultsFile:
    """agents-cli's own results file takes the names of the plan's only agents-cli dataset (`results.agents_cli_
    results.named_for`); with several there is no telling which one it graded, so its own names stay."""
    from adk_eval_gate.results.agents_cli_results import named_for

    datasets = list(agents_cli_cases(plan))
    return named_for(results, *datasets[0]) if len(datasets) == 1 else results
