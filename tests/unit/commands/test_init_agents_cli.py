"""`init` in an agents-cli project: its manifest's agent folder, its datasets and eval_config.yaml, wired unchanged."""

from __future__ import annotations

import shutil
from pathlib import Path

import yaml

from adk_eval_gate.commands.main import main
from adk_eval_gate.run.plan import build_plan
from tests.conftest import ROOT

EXAMPLE = ROOT / "examples" / "agents_cli"


def _project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    shutil.copytree(EXAMPLE, root, ignore=shutil.ignore_patterns("eval-gate.yml", "baseline", "__pycache__"))
    return root


def test_init_wires_the_manifest_agent_to_its_datasets_and_config(tmp_path, capsys):
    root = _project(tmp_path)
    assert main(["init", "--dir", str(root), "--branch", "main"]) == 0
    config = yaml.safe_load((root / "eval-gate.yml").read_text())
    (agent,) = config["agents"]
    assert agent["target"] == {"kind": "adk", "agent": "app"}
    assert agent["evalsets"] == ["tests/eval/datasets/*-dataset.json"]
    assert agent["eval_config"] == "tests/eval/eval_config.yaml"
    plan = build_plan(root / "eval-gate.yml")
    assert [c.name for c in plan.agents[0].eval_sets[0].criteria] == [
        "matches_reference",
        "used_expected_tool",
        "response_length",
    ]
    assert "agent app: app runs tests/eval/datasets/*-dataset.json" in capsys.readouterr().out


def test_agent_directory_comes_from_the_manifest(tmp_path, capsys):
    root = _project(tmp_path)
    (root / "app").rename(root / "travel")
    (root / "agents-cli-manifest.yaml").write_text('name: "t"\nagent_directory: "travel"\n')
    assert main(["init", "--dir", str(root), "--branch", "main"]) == 0
    assert yaml.safe_load((root / "eval-gate.yml").read_text())["agents"][0]["target"]["agent"] == "travel"


def test_a_manifest_pointing_at_no_package_is_one_line(tmp_path, capsys):
    root = _project(tmp_path)
    (root / "agents-cli-manifest.yaml").write_text('agent_directory: "missing"\n')
    assert main(["init", "--dir", str(root), "--branch", "main"]) == 2
    err = capsys.readouterr().err.strip()
    assert "agents-cli-manifest.yaml: agent_directory: 'missing' is not an agent package" in err
    assert len(err.splitlines()) == 1 and not (root / "eval-gate.yml").exists()


def test_agent_directory_defaults_to_app(tmp_path, capsys):
    root = _project(tmp_path)
    (root / "agents-cli-manifest.yaml").write_text('name: "t"\n')
    assert main(["init", "--dir", str(root), "--branch", "main"]) == 0
    assert yaml.safe_load((root / "eval-gate.yml").read_text())["agents"][0]["target"]["agent"] == "app"
