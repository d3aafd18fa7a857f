"""`adk-eval-gate init` on ADK's usual layouts: the real published eval files (../shared/reference/real-evalsets)
with agent packages beside them, and layouts built here. What it writes must validate and run."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml

from adk_eval_gate.commands.main import main
from adk_eval_gate.run.plan import build_plan
from tests.conftest import EXAMPLE, ROOT

# The corpus sits in shared/ beside the repository (CI's clone, or a worktree's parent folders).
REAL = next(
    (
        p / "shared" / "reference" / "real-evalsets"
        for p in ROOT.parents
        if (p / "shared" / "reference" / "real-evalsets").is_dir()
    ),
    ROOT.parent / "shared" / "reference" / "real-evalsets",
)
needs_real = pytest.mark.skipif(not REAL.is_dir(), reason=f"the real eval-file corpus is not here ({REAL})")


def _agent(folder: Path, name: str) -> None:
    """An agent package as `adk create` writes it (the model is never called: init only validates)."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "__init__.py").write_text("from . import agent\n")
    (folder / "agent.py").write_text(
        f'from google.adk.agents import LlmAgent\n\nroot_agent = LlmAgent(name="{name}", model="gemini-2.0-flash")\n'
    )


def _init(root: Path, capsys) -> tuple[int, str, str]:
    code = main(["init", "--dir", str(root), "--branch", "main"])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _agents(root: Path) -> dict[str, dict]:
    return {a["name"]: a for a in yaml.safe_load((root / "eval-gate.yml").read_text())["agents"]}


def _cases(root: Path) -> int:
    return sum(len(s.file.eval_set.eval_cases) for a in build_plan(root / "eval-gate.yml").agents for s in a.eval_sets)


@needs_real
def test_adk_python_fixtures_agent_folders_holding_their_eval_files(tmp_path, capsys):
    shutil.copytree(REAL / "adk-python", tmp_path / "repo")
    root = tmp_path / "repo"
    fixture = root / "tests" / "integration" / "fixture"
    names = sorted(p.name for p in fixture.iterdir())
    for name in names:
        _agent(fixture / name, name)
    code, out, _ = _init(root, capsys)
    assert code == 0
    agents = _agents(root)
    assert sorted(agents) == names
    assert agents["home_automation_agent"]["target"] == {
        "kind": "adk",
        "agent": "tests/integration/fixture/home_automation_agent",
    }
    # Every eval file lands in the plan once, with the test_config.json beside it.
    files = sorted(p for p in fixture.rglob("*.test.json"))
    plan = build_plan(root / "eval-gate.yml")
    planned = sorted(s.file.path for a in plan.agents for s in a.eval_sets)
    assert planned == files
    nested = next(s for a in plan.agents for s in a.eval_sets if s.file.path.parent.name == "memorizing_past_events")
    assert nested.criteria_source.endswith("memorizing_past_events/test_config.json")
    assert "next steps:" in out and "GOOGLE_API_KEY" in out and "pull-requests: write" in out


@needs_real
@pytest.mark.parametrize(
    "sample",
    [
        "RAG",
        "customer-service",
        "travel-concierge",
        "brand-search-optimization",
        "academic-research",
        "personalized-shopping",
    ],
)
def test_adk_samples_an_agent_package_with_an_eval_folder_beside_it(tmp_path, capsys, sample):
    root = tmp_path / sample
    shutil.copytree(REAL / "adk-samples" / "python" / "agents" / sample, root)
    package = sample.lower().replace("-", "_")
    _agent(root / package, package)
    _agent(root / package / "a_sub_agent", "helper")  # a sub-agent package is not a second agent
    (root / "requirements.txt").write_text("google-adk\n")
    code, out, _ = _init(root, capsys)
    assert code == 0, out
    config = yaml.safe_load((root / "eval-gate.yml").read_text())
    assert [a["target"]["agent"] for a in config["agents"]] == [package]
    assert config["setup"] == ["pip install -r requirements.txt"]
    assert _cases(root) == len(list(root.rglob("*.test.json"))) + len(list(root.rglob("*.evalset.json")))
    workflow = yaml.safe_load((root / ".github" / "workflows" / "agent-evals.yml").read_text())
    assert workflow["permissions"] == {"contents": "read", "pull-requests": "write", "actions": "read"}
    assert workflow[True] == {  # YAML 1.1 reads `on` as true; labels re-evaluate the gate at once
        "pull_request": {"types": ["opened", "synchronize", "reopened", "labeled", "unlabeled"]},
        "push": {"branches": ["main"]},
    }
    assert workflow["concurrency"]["cancel-in-progress"] == "${{ github.event_name == 'pull_request' }}"
    steps = workflow["jobs"]["eval"]["steps"]
    gate = next(step for step in steps if step.get("id") == "gate")
    assert gate["with"] == {"config": "eval-gate.yml"}
    upload = next(step for step in steps if step.get("with", {}).get("name") == config["baseline"]["name"])
    assert upload["if"] == "always()"  # the baseline keeps advancing after an accepted regression


def test_a_layout_built_here_runs_end_to_end(tmp_path, capsys):
    """Two agents, their evals under tests/eval/<agent>/ (the bundled agent's with ADK's eval_config.json, named
    in the config since ADK only reads it when told), and a broken eval file."""
    root = tmp_path / "repo"
    shutil.copytree(EXAMPLE / "hello_world", root / "hello_world")
    (root / "tests" / "eval" / "hello_world").mkdir(parents=True)
    shutil.copy(EXAMPLE / "evals" / "dice.evalset.json", root / "tests" / "eval" / "hello_world")
    shutil.copy(EXAMPLE / "evals" / "eval_config.json", root / "tests" / "eval" / "hello_world")
    _agent(root / "agents" / "other_agent", "other_agent")
    (root / "tests" / "eval" / "other_agent").mkdir(parents=True)
    (root / "tests" / "eval" / "other_agent" / "a.test.json").write_text(
        json.dumps([{"query": "hi", "reference": "hello"}])
    )
    (root / "tests" / "eval" / "other_agent" / "broken.test.json").write_text("{not json")
    code, out, _ = _init(root, capsys)
    assert code == 0
    agents = _agents(root)
    assert agents["hello_world"]["eval_config"] == "tests/eval/hello_world/eval_config.json"
    # a glob even for one file, so that the next one added is gated; the exact file where a glob would also take
    # one that does not load
    assert agents["hello_world"]["evalsets"] == ["tests/eval/hello_world/*.evalset.json"]
    assert agents["other_agent"] == {
        "name": "other_agent",
        "target": {"kind": "adk", "agent": "agents/other_agent"},
        "evalsets": ["tests/eval/other_agent/a.test.json"],
        "num_runs": {"min": 2, "max": 10},  # one case: no range comes near 90% power, so the fallback
    }
    assert "not wired: tests/eval/other_agent/broken.test.json" in out
    # Working means it runs: the bundled agent's six cases score as they do with the hand-written config.
    results = tmp_path / "r.json"
    assert (
        main(
            [
                "run",
                "--config",
                str(root / "eval-gate.yml"),
                "--output",
                str(results),
                "--quiet",
                "--cases",
                "dice",
            ]
        )
        == 1
    )
    assert json.loads(results.read_text())["summary"] == {
        "total": 6,
        "passed": 4,
        "failed": 2,
        "not_evaluated": 0,
        "error": 0,
        "not_run": 0,
    }


def test_refuses_to_overwrite_and_needs_an_agent_and_an_eval_file(tmp_path, capsys):
    root = tmp_path / "repo"
    root.mkdir()
    code, _, err = _init(root, capsys)
    assert code == 2 and "holds no ADK agent folder" in err and len(err.strip().splitlines()) == 1
    _agent(root / "my_agent", "my_agent")
    code, _, err = _init(root, capsys)
    assert code == 2 and "holds no eval file" in err
    (root / "my_agent" / "x.evalset.json").write_text(
        json.dumps(
            {
                "eval_set_id": "x",
                "eval_cases": [{"eval_id": "c", "conversation": [{"user_content": {"parts": [{"text": "hi"}]}}]}],
            }
        )
    )
    workflow = root / ".github" / "workflows" / "agent-evals.yml"
    workflow.parent.mkdir(parents=True)
    workflow.write_text("mine\n")
    code, _, err = _init(root, capsys)
    assert code == 2 and "agent-evals.yml: already exists; init never overwrites a file" in err
    assert workflow.read_text() == "mine\n" and not (root / "eval-gate.yml").exists()
    workflow.unlink()
    assert _init(root, capsys)[0] == 0
    before = (root / "eval-gate.yml").read_text()
    code, _, err = _init(root, capsys)
    assert code == 2 and "eval-gate.yml: already exists" in err and (root / "eval-gate.yml").read_text() == before
    # Eval files beside the agent use the agent folder itself.
    assert _agents(root)["my_agent"]["evalsets"] == ["my_agent/*.evalset.json"]
