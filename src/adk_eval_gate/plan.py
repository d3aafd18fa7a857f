"""Everything a run needs, validated before any agent runs: the config, each eval set and its criteria.

`adk-eval-gate validate` is exactly `build_plan`: if it succeeds, the inputs are good.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from fnmatch import fnmatchcase
from pathlib import Path

import jinja2

from .config.loader import AgentPlan, Workflow, load_workflow, shown_path
from .config.models import AdaptiveRuns
from .criteria.base import ConfiguredCriterion
from .criteria.prompts import BUILT_IN, environment
from .criteria.registry import DEFAULT_CRITERIA, REGISTRY, resolve_criteria
from .criteria.rubrics import check_rubrics
from .errors import InputError, did_you_mean
from .evalsets.eval_config import EvalConfigData, load_eval_config, sibling_test_config
from .evalsets.loader import EvalSetFile, load_eval_set
from .files import read_text


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
    resolved = resolve_criteria(data.criteria, str(config_path), custom_metrics=data.custom_metric_paths)
    return data, tuple(resolved)


def _check_report_templates(workflow: Workflow) -> None:
    """A comment template that does not parse would only fail after every agent ran, leaving no report."""
    folder = workflow.template_dir
    if folder is None:
        return
    if not folder.is_dir():
        raise InputError(workflow.path, "report.templates", f"{_relative(workflow, folder)} is not a folder",
                         "point at a folder holding comment.md.j2")
    from .report.markdown import environment  # the report stage, only when an override needs checking

    templates = environment(folder)
    for path in sorted(folder.glob("*.j2")):
        shown = _relative(workflow, path)
        try:
            templates.parse(read_text(path, "report template"))
        except InputError as exc:
            raise exc.with_file(shown) from None
        except jinja2.TemplateSyntaxError as exc:
            raise InputError(shown, None, f"template syntax error: {exc.message}", "fix the Jinja syntax", line=exc.lineno) from None
    _trial_render(workflow, folder)


def _trial_render(workflow: Workflow, folder: Path) -> None:
    """Renders the override once on an empty run: an unknown variable, filter or include fails here, not after
    every agent ran (when it would cost the report and the comment)."""
    from .baseline import build_comparison
    from .baseline.stores import LoadOutcome
    from .report.markdown import render_report
    from .results.build import tool_info
    from .results.models import Counts, GitInfo, ResultsFile, Timings

    results = ResultsFile(tool=tool_info(), git=GitInfo(), config_file=workflow.path.name,
                          timings=Timings(started_at="", finished_at="", duration_seconds=0.0, inference_seconds=0.0,
                                          scoring_seconds=0.0), summary=Counts(), eval_sets=[])
    comparison = build_comparison(results, LoadOutcome(None, []), workflow.settings.gate)
    try:
        render_report(comparison, results, {}, template_dir=folder)
    except jinja2.TemplateError as exc:
        where = f"{_relative(workflow, folder)}/{getattr(exc, 'name', None) or 'comment.md.j2'}"
        raise InputError(where, None, f"template fails to render: {' '.join(str(exc).split())[:200]}",
                         "use only the variables and filters of the built-in comment.md.j2", line=getattr(exc, "lineno", None)) from None


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
            templates.parse(read_text(path, "judge template"))
        except jinja2.TemplateSyntaxError as exc:
            raise InputError(path, None, f"template syntax error: {exc.message}", "fix the Jinja syntax", line=exc.lineno) from None


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
            raise InputError(_relative(workflow, loaded.path), f"eval_cases[{index}].conversation_scenario",
                             f"case {case.eval_id!r} is a scenario, which the command target cannot run "
                             f"(agent {agent.name!r}: its protocol sends every user turn up front)",
                             "run scenario cases with the adk or http target, or give the case a conversation")


def build_plan(config_path: str | Path) -> Plan:
    return plan_for(load_workflow(config_path))


def plan_for(workflow: Workflow) -> Plan:
    """The plan of an already loaded workflow (AgentEvaluator builds its workflow in code, not from YAML)."""
    try:
        return _build(workflow)
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
        from .results.build import read_results  # the results stage, only when there is a baseline to check

        read_results(path, "baseline file")


def _build(workflow: Workflow) -> Plan:
    _check_file_baseline(workflow)
    _check_report_templates(workflow)
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
                raise InputError(path, "eval_set_id", f"{set_id!r} is also the id of {_relative(workflow, seen[set_id])}",
                                 "give each eval set of an agent a unique eval_set_id (legacy files take the file name)")
            seen[set_id] = path
            config, criteria = _criteria_for(workflow, agent, path)
            if config.source == "inline":
                check_rubrics(criteria, loaded.eval_set, str(path), str(workflow.path), ("agents", agent.index, "criteria"),
                              workflow.lines)
            else:
                check_rubrics(criteria, loaded.eval_set, str(path), None if config.source == "default" else config.source)
            source = config.source if config.source in ("inline", "default") else _relative(workflow, Path(config.source))
            plans.append(EvalSetPlan(loaded, criteria, source, config.user_simulator_config))
        agents.append(AgentRunPlan(agent, tuple(plans)))
    return Plan(workflow, tuple(agents))


def _set_matches(pattern: str, plan: Plan, agent: AgentRunPlan, eval_set: EvalSetPlan) -> bool:
    """A selector names an eval set the way users know it: its id, its file (as in the config or `adk eval`),
    or agent/id when two agents share a set."""
    path = eval_set.file.path
    names = {eval_set.eval_set_id, f"{agent.name}/{eval_set.eval_set_id}", plan.relative(path), path.name}
    if pattern in names or any(fnmatchcase(name, pattern) for name in names):
        return True
    if any(ch in pattern for ch in "*?["):
        return False
    try:
        return Path(pattern).resolve() == path.resolve()
    except (OSError, ValueError):  # a name too long for a path, a NUL: it names no file, so no eval set
        return False


def _parse_selector(text: str, plan: Plan) -> tuple[str, list[str] | None]:
    """`set` or `set:case1,case2`; the whole text is a set first, so an id or path holding a colon still works."""
    every = [(a, s) for a in plan.agents for s in a.eval_sets]
    if ":" not in text or any(_set_matches(text, plan, a, s) for a, s in every):
        return text, None
    set_part, _, case_part = text.partition(":")
    cases = [c.strip() for c in case_part.split(",") if c.strip()]
    if not cases:
        raise InputError(None, "--cases", f"{text!r} names no case after the colon",
                         "write eval_set_id_or_file:case1,case2 (or drop the colon for the whole set)")
    return set_part, cases


def select_cases(plan: Plan, selectors: list[str]) -> Plan:
    """Only the chosen cases, as `adk eval file.evalset.json:case1,case2` chooses them (globs allowed).
    A name that matches nothing is an input error, never a silently smaller run."""
    chosen: dict[tuple[str, str], set[str] | None] = {}
    for text in selectors:
        set_part, cases = _parse_selector(text.strip(), plan)
        sets = [(a, s) for a in plan.agents for s in a.eval_sets if _set_matches(set_part, plan, a, s)]
        if not sets:
            known = sorted({s.eval_set_id for a in plan.agents for s in a.eval_sets})
            guess = did_you_mean(set_part, known)
            raise InputError(None, "--cases", f"no eval set {set_part!r} in {plan.workflow.path.name}",
                             f"did you mean {guess!r}?" if guess else f"use an eval set id or file: {', '.join(known)}")
        for agent, eval_set in sets:
            key = (agent.name, eval_set.eval_set_id)
            if cases is None:
                chosen[key] = None
                continue
            ids = [c.eval_id for c in eval_set.file.eval_set.eval_cases]
            for pattern in cases:
                hits = {i for i in ids if fnmatchcase(i, pattern)}
                if not hits:
                    guess = did_you_mean(pattern, ids)
                    raise InputError(eval_set.file.path, "--cases", f"no case {pattern!r} in eval set {eval_set.eval_set_id!r}",
                                     f"did you mean {guess!r}?" if guess else f"use one of: {', '.join(ids[:20])}")
                if chosen.get(key, set()) is not None:
                    chosen[key] = chosen.get(key, set()) | hits
    return keep_cases(plan, lambda agent, set_id, eval_id: (agent, set_id) in chosen
                      and (chosen[(agent, set_id)] is None or eval_id in chosen[(agent, set_id)]))


def keep_cases(plan: Plan, wanted: Callable[[str, str, str], bool]) -> Plan:
    """The plan with only the cases `wanted(agent, eval_set_id, eval_id)` keeps; emptied eval sets and agents go."""
    agents = []
    for agent in plan.agents:
        sets = []
        for eval_set in agent.eval_sets:
            cases = [c for c in eval_set.file.eval_set.eval_cases if wanted(agent.name, eval_set.eval_set_id, c.eval_id)]
            if not cases:
                continue
            file = replace(eval_set.file, eval_set=eval_set.file.eval_set.model_copy(update={"eval_cases": cases}))
            sets.append(replace(eval_set, file=file))
        if sets:
            agents.append(AgentRunPlan(agent.agent, tuple(sets)))
    return Plan(plan.workflow, tuple(agents))
