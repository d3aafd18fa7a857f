"""`adk-eval-gate init`: a working `eval-gate.yml` and GitHub workflow for a repository laid out as ADK expects.

It finds the agent folders (`adk eval`'s kind: a package whose `agent.py` defines `root_agent`, `app` or
`get_agent_async`) and the eval files (`*.evalset.json`, `*.test.json`) and wires each eval file to the agent it
belongs to: the agent folder it sits in, else the agent named in its path, else the only agent. Criteria stay
where ADK users keep them: a `test_config.json` beside the eval files is read as `adk eval` and AgentEvaluator
read it; an `eval_config.json` (which ADK only reads when passed explicitly) is named in the config. The result is
validated before anything is written, and existing files are never overwritten.

An agents-cli project (its `agents-cli-manifest.yaml` at the root) gets one entry for its agent folder
(`agent_directory`, default `app`) with its datasets (`tests/eval/datasets/*-dataset.json`) and its
`tests/eval/eval_config.yaml`, both read unchanged.
"""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from adk_eval_gate.core.errors import InputError
from adk_eval_gate.core.yaml_files import load_yaml
from adk_eval_gate.evalsets.eval_config import TEST_CONFIG_NAME
from adk_eval_gate.evalsets.loader import load_eval_set

if TYPE_CHECKING:
    from adk_eval_gate.run.plan import Plan

CONFIG_NAME = "eval-gate.yml"
WORKFLOW_PATH = Path(".github") / "workflows" / "agent-evals.yml"
EVAL_CONFIG_NAME = "eval_config.json"
EVAL_SUFFIXES = (".evalset.json", ".test.json")
_SKIP = {
    ".git",
    ".venv",
    "venv",
    "env",
    "node_modules",
    "__pycache__",
    ".adk",
    "site-packages",
    ".tox",
    "build",
    "dist",
    ".mypy_cache",
    ".pytest_cache",
    ".ruff_cache",
}
_AGENT_DEFINITION = re.compile(r"^(?:root_agent|app)\s*(?::[^=\n]*)?=|^(?:async\s+)?def\s+get_agent_async\b", re.M)


@dataclass
class _Entry:
    """One `agents:` entry: an agent folder, the eval-file globs it runs, an explicit eval_config if any."""

    name: str
    agent: Path
    evalsets: list[str] = field(default_factory=list)
    eval_config: str | None = None
    set_ids: set[str] = field(default_factory=set)


@dataclass
class InitResult:
    config: Path
    workflow: Path
    entries: list[_Entry]
    skipped: list[str]  # eval files left out, each with why
    branch: str

    def summary(self) -> str:
        lines = [f"wrote {self.config} and {self.workflow}"]
        for entry in self.entries:
            extra = f", criteria from {entry.eval_config}" if entry.eval_config else ""
            agent = entry.agent.relative_to(self.config.parent).as_posix()
            lines.append(f"  agent {entry.name}: {agent} runs {', '.join(entry.evalsets)}{extra}")
        lines += [f"  not wired: {reason}" for reason in self.skipped]
        return "\n".join(lines)


def _walk(root: Path) -> Iterator[Path]:
    for path in sorted(root.iterdir()):
        if path.name in _SKIP or path.name.startswith(".") or path.is_symlink():
            continue
        if path.is_dir():
            yield from _walk(path)
        else:
            yield path


def find_agents(root: Path) -> list[Path]:
    """Agent folders, outermost only (a sub-agent package inside an agent folder is part of that agent)."""
    found: list[Path] = []
    for path in _walk(root):
        if path.name != "agent.py" or not (path.parent / "__init__.py").is_file():
            continue
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        if _AGENT_DEFINITION.search(text):
            found.append(path.parent)
    return [a for a in found if not any(other in a.parents for other in found)]


def find_eval_files(root: Path) -> list[Path]:
    return [p for p in _walk(root) if p.name.endswith(EVAL_SUFFIXES)]


def _owner(eval_file: Path, agents: list[Path]) -> Path | None:
    for agent in agents:
        if agent in eval_file.parents:
            return agent
    named = [a for a in agents if a.name in eval_file.parts or a.name.replace("_", "-") in eval_file.parts]
    if len(named) == 1:
        return named[0]
    return agents[0] if len(agents) == 1 else None


def _entry_name(agent: Path, folder: Path, root: Path, taken: set[str]) -> str:
    base = re.sub(r"[^A-Za-z0-9_.-]+", "-", agent.name).strip("-.") or "agent"
    name = base
    if name in taken:
        suffix = re.sub(r"[^A-Za-z0-9_.-]+", "-", folder.relative_to(root).as_posix()).strip("-.")
        name = f"{base}-{suffix}"[:100]
    index = 2
    while name in taken:
        name, index = f"{base}-{index}", index + 1
    return name


def _plan_entries(root: Path, agents: list[Path], eval_files: list[Path]) -> tuple[list[_Entry], list[str]]:
    skipped: list[str] = []
    loaded: dict[Path, str] = {}
    for path in eval_files:
        try:
            loaded[path] = load_eval_set(path).eval_set.eval_set_id
        except InputError as exc:
            skipped.append(f"{path.relative_to(root).as_posix()} ({exc.problem})")
    folders: dict[tuple[Path, Path], list[Path]] = {}
    for path in list(loaded):
        owner = _owner(path, agents)
        siblings = folders.get((owner, path.parent), []) if owner is not None else []
        twin = next((f for f in siblings if loaded[f] == loaded[path]), None)
        if owner is None:
            skipped.append(
                f"{path.relative_to(root).as_posix()} (no single agent it belongs to; add it to an agent by hand)"
            )
        elif twin is not None:
            skipped.append(
                f"{path.relative_to(root).as_posix()} (its eval_set_id {loaded[path]!r} is also {twin.name}'s)"
            )
        else:
            folders.setdefault((owner, path.parent), []).append(path)
            continue
        del loaded[path]
    entries: list[_Entry] = []
    for (agent, folder), files in folders.items():
        ids = {loaded[f] for f in files}
        own_config = None
        if not (folder / TEST_CONFIG_NAME).is_file() and (folder / EVAL_CONFIG_NAME).is_file():
            own_config = (folder / EVAL_CONFIG_NAME).relative_to(root).as_posix()
        # Eval set ids must be unique per agent entry, and an eval_config applies to a whole entry.
        entry = next(
            (e for e in entries if e.agent == agent and e.eval_config == own_config and not e.set_ids & ids),
            None,
        )
        if entry is None:
            entry = _Entry(_entry_name(agent, folder, root, {e.name for e in entries}), agent, eval_config=own_config)
            entries.append(entry)
        entry.set_ids |= ids
        entry.evalsets += _globs(folder, files, root, set(loaded))
    return entries, skipped


def _globs(folder: Path, files: list[Path], root: Path, loadable: set[Path]) -> list[str]:
    """A glob per eval-file kind, so new files are picked up (`validate` lists what each matched); the exact files
    when a glob would also match one that does not load."""
    out = []
    relative = folder.relative_to(root).as_posix()
    prefix = "" if relative == "." else relative + "/"
    for suffix in EVAL_SUFFIXES:
        mine = [f for f in files if f.name.endswith(suffix)]
        if not mine:
            continue
        others = [f for f in folder.glob(f"*{suffix}") if f not in mine or f not in loadable]
        # a single file gets its glob too: the next file added to the folder is gated without editing the config
        out += [prefix + f.name for f in mine] if others else [f"{prefix}*{suffix}"]
    return out


AGENTS_CLI_MANIFEST = "agents-cli-manifest.yaml"
AGENTS_CLI_DATASETS = Path("tests") / "eval" / "datasets"
AGENTS_CLI_CONFIG = Path("tests") / "eval" / "eval_config.yaml"


def agents_cli_entry(root: Path, taken: set[str]) -> _Entry | None:
    """The agents-cli project at `root`, as one entry; None when there is no manifest."""
    manifest = root / AGENTS_CLI_MANIFEST
    if not manifest.is_file():
        return None
    data, _ = load_yaml(manifest, "agents-cli manifest")
    directory = (data or {}).get("agent_directory") if isinstance(data, dict) else None
    directory = directory if isinstance(directory, str) and directory.strip() else "app"
    agent = root / directory
    if not (agent / "__init__.py").is_file():
        raise InputError(
            manifest,
            "agent_directory",
            f"{directory!r} is not an agent package (no __init__.py)",
            "point agent_directory at the folder that holds agent.py",
        )
    if not sorted((root / AGENTS_CLI_DATASETS).glob("*-dataset.json")):
        raise InputError(
            root / AGENTS_CLI_DATASETS,
            None,
            "holds no agents-cli dataset (*-dataset.json)",
            "create one (agents-cli's basic-dataset.json shape), then run init again",
        )
    entry = _Entry(_entry_name(agent, root, root, taken), agent, [f"{AGENTS_CLI_DATASETS.as_posix()}/*-dataset.json"])
    if (root / AGENTS_CLI_CONFIG).is_file():
        entry.eval_config = AGENTS_CLI_CONFIG.as_posix()
    return entry


def _yaml(value: str) -> str:
    return json.dumps(value)  # a JSON string is a YAML scalar that needs no further thought about quoting


def render_config(entries: list[_Entry], root: Path, runs: dict[str, tuple[str, str]] | None = None) -> str:
    """`runs`: per entry name, its `num_runs` value and the line saying what it buys (`size_runs`)."""
    lines = [
        "# adk-eval-gate config, written by `adk-eval-gate init`. Relative paths resolve against this file.",
        "# Check it with `adk-eval-gate validate`; try it with `adk-eval-gate ci` (both find this file from anywhere "
        "in the repository).",
    ]
    setup = _setup(root)
    if setup:
        lines += [
            "",
            "# The agent's own dependencies, installed before it runs in CI.",
            f"setup: [{_yaml(setup)}]",
        ]
    lines += [
        "",
        "# The baseline is the results artifact of the default branch's newest run of the workflow",
        "# (.github/workflows/agent-evals.yml uploads it on every push there).",
        "baseline: {store: artifact, name: adk-eval-gate-results}",
        "",
        "gate:",
        "  fail_on: [regression, error, drift]   # what got worse (also over many merges), cases that could not run",
        "",
        "agents:",
    ]
    for entry in entries:
        lines += [
            f"  - name: {_yaml(entry.name)}",
            f"    target: {{kind: adk, agent: {_yaml(entry.agent.relative_to(root).as_posix())}}}",
            f"    evalsets: [{', '.join(_yaml(p) for p in entry.evalsets)}]",
        ]
        if entry.eval_config and entry.eval_config.endswith(".yaml"):
            lines.append(f"    eval_config: {_yaml(entry.eval_config)}   # agents-cli's own file, read unchanged")
        elif entry.eval_config:
            lines.append(
                f"    eval_config: {_yaml(entry.eval_config)}   # ADK's own file, as `adk eval --config_file_path` "
                "takes it"
            )
        value, note = (runs or {}).get(entry.name, ("1", "sized once the eval sets load"))
        lines.append(f"    num_runs: {value}   # {note}")
    return "\n".join(lines) + "\n"


def sized_runs(plan: Plan) -> dict[str, tuple[str, str]]:
    """Adaptive runs for each agent, sized by the calibration's simulation to the cases it has (all of them: with
    two or more eval sets the pooled verdict weighs every case) and the run's Holm family."""
    from adk_eval_gate.baseline.power_report import family_size
    from adk_eval_gate.baseline.power_simulation import size_runs
    from adk_eval_gate.run.preflight import plan_designs

    designs = plan_designs(plan)
    family = family_size(designs, plan.workflow.settings.gate)
    gate = plan.workflow.settings.gate
    out = {}
    for agent in plan.agents:
        cases = sum(d.cases for d in designs if d.agent == agent.name)
        criteria = {c for d in designs if d.agent == agent.name for c in d.criteria}
        tolerance = max((gate.tolerance_for(c) for c in criteria), default=gate.tolerance_for("default"))
        sizing = size_runs(cases, family, gate.alpha, tolerance)
        value = f"{{min: {sizing.design.first_runs}, max: {sizing.design.max_runs}}}"
        out[agent.name] = (value, f"{sizing.note()}; a push to the default branch runs the max")
    return out


def _setup(root: Path) -> str | None:
    if (root / "requirements.txt").is_file():
        return "pip install -r requirements.txt"
    if (root / "pyproject.toml").is_file():
        return "pip install ."
    return None


def default_branch(root: Path) -> str:
    for command in (
        ["git", "symbolic-ref", "--short", "refs/remotes/origin/HEAD"],
        ["git", "branch", "--show-current"],
    ):
        try:
            done = subprocess.run(command, cwd=root, capture_output=True, text=True, timeout=10, check=False)
        except (OSError, subprocess.SubprocessError):
            continue
        name = done.stdout.strip().removeprefix("origin/")
        if done.returncode == 0 and name:
            return name
    return "main"


# The quick-start workflow, a `str.format` template ({branch}, {config}; GitHub's own braces doubled).
WORKFLOW = (Path(__file__).parent / "templates" / "init-workflow.yml").read_text(encoding="utf-8")


def init(root: Path, branch: str | None = None) -> InitResult:
    from adk_eval_gate.run.plan import build_plan

    root = root.resolve()
    config, workflow = root / CONFIG_NAME, root / WORKFLOW_PATH
    for path in (config, workflow):
        if path.exists():
            raise InputError(
                path,
                None,
                "already exists; init never overwrites a file",
                "move it aside (or edit it by hand) and run init again",
            )
    project = agents_cli_entry(root, set())
    agents = [a for a in find_agents(root) if project is None or a != project.agent]
    if not agents and project is None:
        raise InputError(
            root,
            None,
            "holds no ADK agent folder (a package whose agent.py defines root_agent)",
            "run init at the repository root, where `adk eval` would find the agent",
        )
    eval_files = find_eval_files(root) if agents else []
    if not eval_files and project is None:
        raise InputError(
            root,
            None,
            "holds no eval file (*.evalset.json or *.test.json)",
            "create one with `adk web` or `adk eval_set create`, then run init again",
        )
    entries, skipped = _plan_entries(root, agents, eval_files) if eval_files else ([], [])
    if project is not None:
        project.name = _entry_name(project.agent, root, root, {e.name for e in entries})
        entries.insert(0, project)
    if not entries:
        raise InputError(
            root,
            None,
            "no eval file could be wired to an agent: " + "; ".join(skipped[:3]),
            "fix the files listed, or write eval-gate.yml by hand",
        )
    branch = branch or default_branch(root)
    config.write_text(render_config(entries, root), encoding="utf-8")
    try:
        plan = build_plan(config)  # what we wrote must validate, or nothing is left behind
        config.write_text(render_config(entries, root, sized_runs(plan)), encoding="utf-8")
        build_plan(config)
    except InputError:
        config.unlink()
        raise
    workflow.parent.mkdir(parents=True, exist_ok=True)
    workflow.write_text(WORKFLOW.format(branch=branch, config=CONFIG_NAME), encoding="utf-8")
    return InitResult(config, workflow, entries, skipped, branch)
