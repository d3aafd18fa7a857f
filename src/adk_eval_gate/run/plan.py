"""Everything a run needs, validated before any agent runs: the config, each eval set and its criteria.

`adk-eval-gate validate` is exactly `build_plan`: if it succeeds, the inputs are good.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import jinja2

from adk_eval_gate.config.loader import AgentPlan, Workflow, load_workflow
from adk_eval_gate.config.workflow_settings import AdaptiveRuns
from adk_eval_gate.core.errors import InputError
from adk_eval_gate.core.files import read_text
from adk_eval_gate.core.json_types import JsonObject
from adk_eval_gate.core.keys import CaseKey
from adk_eval_gate.core.paths import relative_posix, shown_path
from adk_eval_gate.criteria.engine.criterion import SomeCriterion
from adk_eval_gate.criteria.engine.prompts import BUILT_IN, environment
from adk_eval_gate.criteria.registry import DEFAULT_CRITERIA, REGISTRY, resolve_criteria
from adk_eval_gate.criteria.rubrics import check_rubrics
from adk_eval_gate.evalsets.adk_eval_schema import Invocation
from adk_eval_gate.evalsets.eval_config import EvalConfigData, load_eval_config, sibling_test_config
from adk_eval_gate.evalsets.loader import EvalSetFile, load_eval_set
from adk_eval_gate.run.agents_cli_plan import agents_cli_criteria

SHOWN_WARNINGS = 50  # ignored keys listed by one plan; the rest are counted


@dataclass(frozen=True)
class EvalSetPlan:
    file: EvalSetFile
    criteria: tuple[SomeCriterion, ...]
    criteria_source: str  # "inline", "default" or the eval config file's path
    user_simulator_config: JsonObject | None
    # keys the reference tools ignore in the eval file and its eval config: printed, never fatal
    warnings: tuple[InputError, ...] = ()

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
        return relative_posix(self.workflow.base_dir, path)

    @property
    def warnings(self) -> tuple[InputError, ...]:
        """Each once, though an eval config shared by several eval sets is read for each."""
        unique = list(
            {w.render(): w for agent in self.agents for eval_set in agent.eval_sets for w in eval_set.warnings}.values()
        )
        if len(unique) <= SHOWN_WARNINGS:
            return tuple(unique)
        more = len(unique) - SHOWN_WARNINGS + 1  # a file written for another tool must not flood the log
        note = InputError(None, None, f"{more} more keys that google-adk or agents-cli ignore", "fix those above first")
        return (*unique[: SHOWN_WARNINGS - 1], note)

    def expected_cases(self) -> dict[CaseKey, list[Invocation]]:
        """Each case's expected turns, for reports that show what was expected beside what the agent did."""
        return {
            CaseKey(agent.name, eval_set.eval_set_id, case.eval_id): list(case.conversation or [])
            for agent in self.agents
            for eval_set in agent.eval_sets
            for case in eval_set.file.eval_set.eval_cases
        }


def _criteria_for(
    workflow: Workflow, agent: AgentPlan, eval_set_path: Path
) -> tuple[EvalConfigData, tuple[SomeCriterion, ...]]:
    known = set(REGISTRY)
    if agent.settings.criteria is not None:
        data = EvalConfigData(criteria=dict(agent.settings.criteria), source="inline")
        loc: tuple[str | int, ...] = ("agents", agent.index, "criteria")
        resolved = resolve_criteria(data.criteria, str(workflow.path), loc=loc, lines=workflow.lines)
        return data, tuple(resolved)
    config_path = agent.eval_config_path or sibling_test_config(eval_set_path)
    if config_path is None:
        data = EvalConfigData(criteria=dict(DEFAULT_CRITERIA), source="default")
        return data, tuple(resolve_criteria(data.criteria, None))
    data = load_eval_config(config_path, known)
    ignored: list[InputError] = []  # options ADK's criteria keep and never read: warnings, in a file ADK reads
    resolved = resolve_criteria(
        data.criteria, str(config_path), custom_metrics=data.custom_metric_paths, ignored=ignored
    )
    return replace(data, warnings=(*data.warnings, *ignored)), tuple(resolved)


def _check_judge_templates(workflow: Workflow) -> None:
    """Every override must be a judge template we have, and parse: a typo would otherwise be silently ignored, and a
    syntax error would only surface as not-evaluated cases."""
    folder = workflow.judge_template_dir
    if folder is None:
        return
    if not folder.is_dir():
        raise InputError(
            workflow.path, "judge.templates", f"{folder} is not a folder", "point at a folder of <criterion>.j2 files"
        )
    known = sorted(p.name for p in BUILT_IN.glob("*.j2"))
    templates = environment(folder)
    for path in sorted(folder.glob("*.j2")):
        if path.name not in known:
            raise InputError(
                path,
                None,
                "is not a judge template, so it would never be used",
                f"name it after one of {', '.join(known)}",
            )
        try:
            templates.parse(read_text(path, "judge template"))
        except jinja2.TemplateSyntaxError as exc:
            raise InputError(
                path, None, f"template syntax error: {exc.message}", "fix the Jinja syntax", line=exc.lineno
            ) from None


def _shown_errors(workflow: Workflow, error: InputError) -> InputError:
    """Errors in files the config points at name them as the config does, relative to its directory."""
    if error.file and Path(error.file).is_absolute():
        return error.with_file(shown_path(Path(error.file), workflow.base_dir))
    return error


def _check_target_fits(agent: AgentPlan, loaded: EvalSetFile, workflow: Workflow) -> None:
    if agent.settings.target.kind != "command":
        return
    for index, case in enumerate(loaded.eval_set.eval_cases):
        if case.conversation is None:
            raise InputError(
                relative_posix(workflow.base_dir, loaded.path),
                f"eval_cases[{index}].conversation_scenario",
                f"case {case.eval_id!r} is a scenario, which the command target cannot run "
                f"(agent {agent.name!r}: its protocol sends every user turn up front)",
                "run scenario cases with the adk or http target, or give the case a conversation",
            )


def build_plan(config_path: str | Path) -> Plan:
    return plan_for(load_workflow(config_path))


def plan_for(workflow: Workflow, checks: Sequence[Callable[[Workflow], None]] = ()) -> Plan:
    """The plan of an already loaded workflow (AgentEvaluator builds its workflow in code, not from YAML).

    `checks` come from the layers above (the report's template override): run here, their errors name files
    as every other plan error does, before any agent runs."""
    try:
        return _build(workflow, checks)
    except InputError as exc:
        raise _shown_errors(workflow, exc) from None


def _check_file_baseline(workflow: Workflow) -> None:
    """A committed baseline that cannot be read would only fail after every agent ran: read it now."""
    settings = workflow.settings.baseline
    if settings.store != "file":
        return
    path = Path(settings.path).expanduser()
    path = path if path.is_absolute() else workflow.base_dir / path
    if path.exists() or path.is_symlink():
        from adk_eval_gate.results.build import (
            read_results,  # the results stage, only when there is a baseline to check
        )

        read_results(path, "baseline file")


def _build(workflow: Workflow, checks: Sequence[Callable[[Workflow], None]]) -> Plan:
    _check_file_baseline(workflow)
    for check in checks:
        check(workflow)
    _check_judge_templates(workflow)
    agents = []
    for agent in workflow.agents:
        plans: list[EvalSetPlan] = []
        seen: dict[str, Path] = {}
        for path in agent.evalset_paths:
            loaded = load_eval_set(path)
            _check_target_fits(agent, loaded, workflow)
            set_id = loaded.eval_set.eval_set_id
            if set_id in seen:
                raise InputError(
                    path,
                    "eval_set_id",
                    f"{set_id!r} is also the id of {relative_posix(workflow.base_dir, seen[set_id])}",
                    "give each eval set of an agent a unique eval_set_id (legacy files take the file name)",
                )
            seen[set_id] = path
            config, criteria = agents_cli_criteria(workflow, agent, loaded) or _criteria_for(workflow, agent, path)
            if config.source == "inline":
                check_rubrics(
                    criteria,
                    loaded.eval_set,
                    str(path),
                    str(workflow.path),
                    ("agents", agent.index, "criteria"),
                    workflow.lines,
                )
            else:
                check_rubrics(
                    criteria, loaded.eval_set, str(path), None if config.source == "default" else config.source
                )
            source = (
                config.source
                if config.source in ("inline", "default")
                else relative_posix(workflow.base_dir, Path(config.source))
            )
            warnings = tuple(_shown_errors(workflow, w) for w in (*loaded.warnings, *config.warnings))
            plans.append(EvalSetPlan(loaded, criteria, source, config.user_simulator_config, warnings))
        agents.append(AgentRunPlan(agent, tuple(plans)))
    return Plan(workflow, tuple(agents))
