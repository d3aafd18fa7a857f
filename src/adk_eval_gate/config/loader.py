"""Reads the workflow YAML into `Workflow`: validated settings with every path resolved and every glob expanded."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from pydantic import ValidationError

from adk_eval_gate.config.globs import GlobTooWide, walk_glob
from adk_eval_gate.config.near_miss import near_miss
from adk_eval_gate.config.target_settings import CommandTargetSettings
from adk_eval_gate.config.workflow_settings import AgentSettings, Settings, is_glob
from adk_eval_gate.core.errors import InputError, did_you_mean, format_loc
from adk_eval_gate.core.files import has_surrogates
from adk_eval_gate.core.paths import shown_path
from adk_eval_gate.core.validation import LineLookup, input_error_from, yaml_line_lookup
from adk_eval_gate.core.yaml_files import load_yaml
from adk_eval_gate.evalsets.criterion_names import CRITERION_NAMES

# Builds the one-line error for a field of the workflow file: (location, problem, fix) -> the error to raise.
WorkflowError = Callable[[tuple[str | int, ...], str, str], InputError]


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


def _path_fix(base: Path, pattern: str, what: str) -> str:
    where = "relative paths resolve against the config file's directory"
    guess = near_miss(base, pattern)
    return f"did you mean {guess!r}? ({where})" if guess else f"fix the {what}; {where}"


def _expand(
    base: Path, pattern: str, loc: tuple[str | int, ...], workflow_error: WorkflowError, *, allow_dirs: bool
) -> list[Path]:
    if not pattern.strip() or "\x00" in pattern:
        raise workflow_error(
            loc, "is an empty path" if not pattern.strip() else "holds a NUL byte", "give a file path or a glob"
        )
    full = Path(pattern).expanduser()
    full = full if full.is_absolute() else base / full
    if is_glob(pattern):
        # Pipes and devices stay in: the reader refuses them by name rather than the glob skipping them silently.
        try:
            found = walk_glob(full)
        except GlobTooWide as exc:
            raise workflow_error(
                loc, f"glob {pattern!r} {exc}", "narrow the pattern to the folder that holds the files"
            ) from None
        matches = [p for p in found if p.exists() and (allow_dirs or not p.is_dir())]
        if (odd := next((p for p in matches if has_surrogates(str(p))), None)) is not None:
            shown = str(odd).encode("utf-8", "backslashreplace").decode()
            raise workflow_error(
                loc,
                f"glob {pattern!r} matches {shown!r}, whose name is not valid UTF-8",
                "rename the file (results and reports are UTF-8)",
            )
        if not matches:
            raise workflow_error(loc, f"glob {pattern!r} matches no file", _path_fix(base, pattern, "pattern"))
        return matches
    try:
        exists = full.exists()
    except OSError as exc:  # a name too long, a symlink loop
        raise workflow_error(loc, f"{pattern!r} cannot be read: {exc.strerror or exc}", "fix the path") from None
    if not exists:
        raise workflow_error(loc, f"{pattern!r} does not exist", _path_fix(base, pattern, "path"))
    if full.is_dir() and not allow_dirs:
        raise workflow_error(
            loc, f"{pattern!r} is a directory", "point at a file or use a glob like dir/*.evalset.json"
        )
    return [full]


def _check_command(
    target: CommandTargetSettings, base: Path, where: tuple[str | int, ...], workflow_error: WorkflowError
) -> None:
    """A missing program or working directory fails every case the same way: say so once, before anything runs."""
    cwd = Path(target.cwd).expanduser() if target.cwd else base
    cwd = cwd if cwd.is_absolute() else base / cwd
    if target.cwd is not None and not cwd.is_dir():
        raise workflow_error(
            (*where, "target", "cwd"),
            f"{target.cwd!r} is not an existing directory",
            "fix the path; relative paths resolve against the config file's directory",
        )
    for i, part in enumerate([*target.command, *target.env, *target.env.values()]):
        if "\x00" in part:  # the operating system cannot pass it: every case would fail to start
            field = ("command", i) if i < len(target.command) else ("env",)
            raise workflow_error((*where, "target", *field), "holds a NUL byte", "remove it")
    program = target.command[0]
    if not program.strip():
        raise workflow_error((*where, "target", "command", 0), "is empty", "name the program to run")
    if "/" in program:
        path = Path(program).expanduser()
        path = path if path.is_absolute() else base / path
        if not path.is_file():
            raise workflow_error(
                (*where, "target", "command", 0),
                f"{program!r} does not exist",
                "fix the path; relative paths resolve against the config file's directory",
            )
        if not os.access(path, os.X_OK):
            raise workflow_error(
                (*where, "target", "command", 0),
                f"{program!r} is not executable",
                f"run `chmod +x {program}` or start it through its interpreter",
            )
    elif shutil.which(program, path=(target.env.get("PATH") or os.environ.get("PATH"))) is None:
        raise workflow_error(
            (*where, "target", "command", 0), f"{program!r} is not on PATH", "install it or give its path"
        )


def _check_cache(base: Path, value: str, workflow_error: WorkflowError) -> None:
    """Created on the first judge call; a file in its place would fail every call of the run instead."""
    if "\x00" in value:
        raise workflow_error(("judge", "cache"), "holds a NUL byte", "give a directory path or null")
    folder = Path(value).expanduser()
    folder = folder if folder.is_absolute() else base / folder
    for candidate in (folder, *folder.parents):
        if candidate.exists():
            if not candidate.is_dir():
                raise workflow_error(
                    ("judge", "cache"),
                    f"{shown_path(candidate, base)!r} is not a directory",
                    "point at a directory (it is created if missing) or set null",
                )
            return


def _check_baseline_path(base: Path, value: str, workflow_error: WorkflowError) -> None:
    """`baseline update` writes it and every run reads it: a directory, or a path under a file, fails both."""
    if "\x00" in value:
        raise workflow_error(("baseline", "path"), "holds a NUL byte", "give a file path")
    path = Path(value).expanduser()
    path = path if path.is_absolute() else base / path
    if path.is_dir():
        raise workflow_error(
            ("baseline", "path"), f"{value!r} is a directory", "point at a results file, e.g. baseline/results.json"
        )
    blocked = next((p for p in path.parents if p.exists()), None)
    if blocked is not None and not blocked.is_dir():
        raise workflow_error(
            ("baseline", "path"),
            f"{value!r} is under {shown_path(blocked, base)!r}, which is a file",
            "point at a results file in a directory",
        )


def _check_tolerance(settings: Settings, workflow_error: WorkflowError) -> None:
    tolerance = settings.gate.tolerance
    if not isinstance(tolerance, dict):
        return
    custom = {name for agent in settings.agents for name in (agent.criteria or {})}
    known = ["default", *CRITERION_NAMES, *sorted(custom)]
    for name in tolerance:
        if name not in known:
            guess = did_you_mean(name, known)
            raise workflow_error(
                ("gate", "tolerance", name),
                "is neither `default` nor a criterion name",
                f"did you mean `{guess}`?" if guess else f"use `default` or one of {', '.join(CRITERION_NAMES)}",
            )


def _check_drift(settings: Settings, workflow_error: WorkflowError) -> None:
    """A window the history cannot hold would quietly compare with its oldest record forever."""
    window, kept = settings.gate.drift.window, settings.history.max_records
    if settings.gate.drift.reference is None and window >= kept:
        raise workflow_error(
            ("gate", "drift", "window"),
            f"{window} merges back is beyond what the history keeps (history.max_records: {kept})",
            f"use a window below {kept}, or raise history.max_records",
        )


def load_workflow(path: str | Path) -> Workflow:
    config_path = Path(path)
    data, node = load_yaml(config_path, "config file")
    lines = yaml_line_lookup(node)
    if not isinstance(data, dict):
        raise InputError(
            config_path,
            None,
            f"expected a mapping at the top level, got {type(data).__name__}",
            "start the file with `agents:`",
            line=1,
        )
    try:
        settings = Settings.model_validate(data)
    except ValidationError as exc:
        raise input_error_from(exc, config_path, model=Settings, lines=lines) from None

    base = config_path.resolve().parent

    def error(loc: tuple[str | int, ...], problem: str, fix: str) -> InputError:
        return InputError(config_path, format_loc(loc), problem, fix, line=lines(loc))

    _check_tolerance(settings, error)
    _check_drift(settings, error)
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
        elif agent.target.kind == "command":
            _check_command(agent.target, base, where, error)
        agents.append(AgentPlan(index, agent, tuple(evalsets), eval_config, tuple(actuals)))
    template_dir = None
    if settings.report.templates:
        template_dir = _expand(base, settings.report.templates, ("report", "templates"), error, allow_dirs=True)[0]
    if settings.judge.cache:
        _check_cache(base, settings.judge.cache, error)
    if settings.baseline.store == "file":
        _check_baseline_path(base, settings.baseline.path, error)
    judge_template_dir = None
    if settings.judge.templates:
        judge_template_dir = _expand(base, settings.judge.templates, ("judge", "templates"), error, allow_dirs=True)[0]
    return Workflow(config_path, base, settings, tuple(agents), lines, template_dir, judge_template_dir)
