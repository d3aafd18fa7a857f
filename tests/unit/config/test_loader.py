"""The workflow file read on its own (config/loader.py): globs expanded, relative paths resolved against the
file, and every bad path or command named with its field, its line and a fix, before anything runs."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from adk_eval_gate.config.loader import load_workflow
from adk_eval_gate.config.near_miss import near_miss
from adk_eval_gate.core.errors import InputError

EVAL_SET = '{"eval_set_id": "s", "eval_cases": []}'


def workflow(tmp_path: Path, target: str, evalsets: str = "[evals/*.evalset.json]") -> Path:
    (tmp_path / "evals").mkdir(exist_ok=True)
    for name in ("a", "b"):
        (tmp_path / "evals" / f"{name}.evalset.json").write_text(EVAL_SET)
    config = tmp_path / "eval-gate.yml"
    config.write_text(f"agents:\n  - name: bot\n    target: {target}\n    evalsets: {evalsets}\n")
    return config


def refused(config: Path) -> InputError:
    with pytest.raises(InputError) as raised:
        load_workflow(config)
    return raised.value


def test_a_glob_is_expanded_once_per_file_and_paths_resolve_against_the_config(tmp_path, monkeypatch):
    monkeypatch.chdir("/")  # not the config's folder: relative paths must not depend on where the run starts
    config = workflow(tmp_path, "{kind: replay, actuals: [evals]}", "[evals/*.evalset.json, evals/a.evalset.json]")
    loaded = load_workflow(config)
    (agent,) = loaded.agents
    assert agent.name == "bot" and loaded.base_dir == tmp_path.resolve()
    assert [p.name for p in agent.evalset_paths] == ["a.evalset.json", "b.evalset.json"]
    assert agent.actuals_paths == (tmp_path.resolve() / "evals",)


def test_a_glob_that_matches_nothing_is_named_with_its_field_and_line(tmp_path):
    error = refused(workflow(tmp_path, "{kind: replay, actuals: [evals]}", "[nothing/*.json]"))
    assert error.field == "agents[0].evalsets[0]" and error.line == 4
    assert "matches no file" in error.problem


def test_a_command_target_that_cannot_start_is_refused_before_anything_runs(tmp_path):
    missing = refused(workflow(tmp_path, "{kind: command, command: [no-such-program-anywhere]}"))
    assert missing.field == "agents[0].target.command[0]" and "is not on PATH" in missing.problem
    script = tmp_path / "agent.sh"
    script.write_text("#!/bin/sh\n")
    script.chmod(0o644)
    not_executable = refused(workflow(tmp_path, "{kind: command, command: [./agent.sh]}"))
    assert "is not executable" in not_executable.problem and "chmod +x ./agent.sh" in (not_executable.fix or "")
    no_folder = refused(workflow(tmp_path, "{kind: command, command: [sh], cwd: gone}"))
    assert no_folder.field == "agents[0].target.cwd" and "is not an existing directory" in no_folder.problem
    nul = refused(workflow(tmp_path, '{kind: command, command: [sh], env: {A: "x\\0y"}}'))
    assert "holds a NUL byte" in nul.problem


def test_a_command_target_that_can_start_loads(tmp_path):
    script = tmp_path / "agent.sh"
    script.write_text("#!/bin/sh\n")
    script.chmod(0o755)
    assert os.access(script, os.X_OK)
    (agent,) = load_workflow(workflow(tmp_path, "{kind: command, command: [./agent.sh], cwd: evals}")).agents
    assert agent.settings.target.kind == "command"


def test_no_suggestion_when_nothing_is_close(tmp_path: Path) -> None:
    (tmp_path / "evals").mkdir()
    (tmp_path / "evals" / "dice.evalset.json").write_text("{}")
    assert near_miss(tmp_path, "totally/different/*.json") is None
    assert near_miss(tmp_path, "evals/*.evalset.json") is None  # it matches: nothing to suggest
    assert near_miss(tmp_path, "evals/dice.evalset.jsn") == "evals/dice.evalset.json"
