"""Reads the workflow YAML into `Workflow`: validated settings with every path resolved and every glob expanded."""

from __future__ import annotations

import glob
from dataclasses import dataclass
from pathlib import Path

from pydantic import ValidationError

from ..errors import InputError, format_loc
from ..files import load_yaml
from ..validation import LineLookup, input_error_from, yaml_line_lookup
from .models import AgentSettings, Settings, is_glob


@dataclass(frozen=True)
class AgentPlan:
    index: int
    settings: AgentSettings
    evalset_paths: tuple[Path, ...]
    eval_config_path: Path | None
    actuals_paths: tuple[Path, ...]

    @property
    def name(self) -> str:
        return self.settings.name


@dataclass(frozen=True)
class Workflow:
    path: Path
    base_dir: Path  # relative paths in the config resolve against this
    settings: Settings
    agents: tuple[AgentPlan, ...]
    lines: LineLookup
    template_dir: Path | None = None
    judge_template_dir: Path | None = None


def _expand(base: Path, pattern: str, loc: tuple[str | int, ...], workflow_error, *, allow_dirs: bool) -> list[Path]:
    if not pattern.strip():
        raise workflow_error(loc, "is an empty path", "give a file path or a glob")
    full = Path(pattern).expanduser()
    full = full if full.is_absolute() else base / full
    if is_glob(pattern):
        matches = sorted(Path(p) for p in glob.glob(str(full), recursive=True))
        matches = [p for p in matches if p.is_file() or (allow_dirs and p.is_dir())]
        if not matches:
            raise workflow_error(loc, f"glob {pattern!r} matches no file (searched from {base})",
                                 "fix the pattern; relative paths resolve against the config file's directory")
        return matches
    if not full.exists():
        raise workflow_error(loc, f"{pattern!r} does not exist (resolved to {full})",
                             "fix the path; relative paths resolve against the config file's directory")
    if full.is_dir() and not allow_dirs:
        raise workflow_error(loc, f"{pattern!r} is a directory", "point at a file or use a glob like dir/*.evalset.json")
    return [full]


def load_workflow(path: str | Path) -> Workflow:
    config_path = Path(path)
    data, node = load_yaml(config_path, "config file")
    lines = yaml_line_lookup(node)
    if not isinstance(data, dict):
        raise InputError(config_path, None, f"expected a mapping at the top level, got {type(data).__name__}",
                         "start the file with `agents:`", line=1)
    try:
        settings = Settings.model_validate(data)
    except ValidationError as exc:
        raise input_error_from(exc, config_path, model=Settings, lines=lines) from None

    base = config_path.resolve().parent

    def error(loc: tuple[str | int, ...], problem: str, fix: str) -> InputError:
        return InputError(config_path, format_loc(loc), problem, fix, line=lines(loc))

    agents = []
    for index, agent in enumerate(settings.agents):
        where = ("agents", index)
        evalsets: list[Path] = []
        for j, pattern in enumerate(agent.evalsets):
            for found in _expand(base, pattern, (*where, "evalsets", j), error, allow_dirs=False):
                if found not in evalsets:
                    evalsets.append(found)
        eval_config = None
        if agent.eval_config is not None:
            eval_config = _expand(base, agent.eval_config, (*where, "eval_config"), error, allow_dirs=False)[0]
        actuals: list[Path] = []
        if agent.target.kind == "replay":
            for j, pattern in enumerate(agent.target.actuals):
                actuals.extend(_expand(base, pattern, (*where, "target", "actuals", j), error, allow_dirs=True))
        elif agent.target.kind == "adk" and ":" not in agent.target.agent:
            _expand(base, agent.target.agent, (*where, "target", "agent"), error, allow_dirs=True)
        agents.append(AgentPlan(index, agent, tuple(evalsets), eval_config, tuple(actuals)))
    template_dir = None
    if settings.report.templates:
        template_dir = _expand(base, settings.report.templates, ("report", "templates"), error, allow_dirs=True)[0]
    judge_template_dir = None
    if settings.judge.templates:
        judge_template_dir = _expand(base, settings.judge.templates, ("judge", "templates"), error, allow_dirs=True)[0]
    return Workflow(config_path, base, settings, tuple(agents), lines, template_dir, judge_template_dir)
