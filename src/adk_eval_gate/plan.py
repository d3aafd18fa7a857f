"""Everything a run needs, validated before any agent runs: the config, each eval set and its criteria.

`adk-eval-gate validate` is exactly `build_plan`: if it succeeds, the inputs are good.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import jinja2

from .config.loader import AgentPlan, Workflow, load_workflow
from .config.models import AdaptiveRuns
from .criteria.base import ConfiguredCriterion
from .criteria.prompts import BUILT_IN, environment
from .criteria.registry import DEFAULT_CRITERIA, REGISTRY, resolve_criteria
from .errors import InputError
from .evalsets.eval_config import EvalConfigData, load_eval_config, sibling_test_config
from .evalsets.loader import EvalSetFile, load_eval_set


@dataclass(frozen=True)
class EvalSetPlan:
    file: EvalSetFile
    criteria: tuple[ConfiguredCriterion, ...]
    criteria_source: str  # "inline", "default" or the eval config file's path
    user_simulator_config: dict | None

    @property
    def eval_set_id(self) -> str:
        return self.file.eval_set.eval_set_id


@dataclass(frozen=True)
class AgentRunPlan:
    agent: AgentPlan
    eval_sets: tuple[EvalSetPlan, ...]

    @property
    def name(self) -> str:
        return self.agent.name

    @property
    def num_runs(self) -> int | AdaptiveRuns:
        return self.agent.settings.num_runs


@dataclass(frozen=True)
class Plan:
    workflow: Workflow
    agents: tuple[AgentRunPlan, ...]

    def relative(self, path: Path) -> str:
        return _relative(self.workflow, path)


def _relative(workflow: Workflow, path: Path) -> str:
    """Paths in results and reports are relative to the config's directory, so they match across machines."""
    try:
        return path.resolve().relative_to(workflow.base_dir).as_posix()
    except ValueError:
        return path.as_posix()


def _criteria_for(workflow: Workflow, agent: AgentPlan, eval_set_path: Path) -> tuple[EvalConfigData, tuple]:
    known = set(REGISTRY)
    if agent.settings.criteria is not None:
        data = EvalConfigData(criteria=dict(agent.settings.criteria), source="inline")
        loc: tuple = ("agents", agent.index, "criteria")
        resolved = resolve_criteria(data.criteria, str(workflow.path), loc=loc, lines=workflow.lines)
        return data, tuple(resolved)
    config_path = agent.eval_config_path or sibling_test_config(eval_set_path)
    if config_path is None:
        data = EvalConfigData(criteria=dict(DEFAULT_CRITERIA), source="default")
        return data, tuple(resolve_criteria(data.criteria, None))
    data = load_eval_config(config_path, known)
    resolved = resolve_criteria(data.criteria, str(config_path), custom_metrics=data.custom_metric_names)
    return data, tuple(resolved)


def _check_judge_templates(workflow: Workflow) -> None:
    """Every override must be a judge template we have, and parse: a typo would otherwise be silently ignored, and a
    syntax error would only surface as not-evaluated cases."""
    folder = workflow.judge_template_dir
    if folder is None:
        return
    if not folder.is_dir():
        raise InputError(workflow.path, "judge.templates", f"{folder} is not a folder", "point at a folder of <criterion>.j2 files")
    known = sorted(p.name for p in BUILT_IN.glob("*.j2"))
    templates = environment(folder)
    for path in sorted(folder.glob("*.j2")):
        if path.name not in known:
            raise InputError(path, None, "is not a judge template, so it would never be used", f"name it after one of {', '.join(known)}")
        try:
            templates.parse(path.read_text(encoding="utf-8"))
        except jinja2.TemplateSyntaxError as exc:
            raise InputError(path, None, f"template syntax error: {exc.message}", "fix the Jinja syntax", line=exc.lineno) from None


def build_plan(config_path: str | Path) -> Plan:
    workflow = load_workflow(config_path)
    _check_judge_templates(workflow)
    agents = []
    for agent in workflow.agents:
        plans: list[EvalSetPlan] = []
        seen: dict[str, Path] = {}
        for path in agent.evalset_paths:
            loaded = load_eval_set(path)
            set_id = loaded.eval_set.eval_set_id
            if set_id in seen:
                raise InputError(path, "eval_set_id", f"{set_id!r} is also the id of {seen[set_id]}",
                                 "give each eval set of an agent a unique eval_set_id (legacy files take the file name)")
            seen[set_id] = path
            config, criteria = _criteria_for(workflow, agent, path)
            source = config.source if config.source in ("inline", "default") else _relative(workflow, Path(config.source))
            plans.append(EvalSetPlan(loaded, criteria, source, config.user_simulator_config))
        agents.append(AgentRunPlan(agent, tuple(plans)))
    return Plan(workflow, tuple(agents))
