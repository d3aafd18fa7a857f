"""`pytest --eval-gate eval-gate.yml`: one item per agent / eval set / case, run by real pytest processes."""

from __future__ import annotations

import importlib.metadata
import importlib.util
import json
import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from tests.conftest import FAULTY_AGENT, ROOT


def _installed_entry_point() -> bool:
    return any(ep.value == "adk_eval_gate.pytest_plugin" for ep in importlib.metadata.entry_points(group="pytest11"))


def _pytest(cwd: Path, *args: str, extra_path: str | None = None) -> subprocess.CompletedProcess:
    # The package may be installed without this entry point yet (an editable install of another checkout).
    plugin = [] if _installed_entry_point() else ["-p", "adk_eval_gate.pytest_plugin"]
    paths = [str(ROOT / "src"), *([extra_path] if extra_path else []), os.environ.get("PYTHONPATH", "")]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in paths if p)}
    env.pop("GOOGLE_API_KEY", None)
    env.pop("GOOGLE_GENAI_USE_VERTEXAI", None)
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", *plugin, *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
    )


def _junit(path: Path) -> dict[str, str]:
    """classname::name → passed / failed / skipped."""
    out = {}
    for case in ET.parse(path).getroot().iter("testcase"):
        kind = next((c.tag for c in case if c.tag in ("failure", "error", "skipped")), "passed")
        out[f"{case.get('classname')}::{case.get('name')}"] = kind
    return out


def test_entry_point_is_declared():
    text = (ROOT / "pyproject.toml").read_text()
    section = text[text.index("[project.entry-points.pytest11]") :].split("\n[", 1)[0]
    target = re.search(r'^adk-eval-gate = "([^"]+)"$', section, re.M).group(1)
    assert importlib.import_module(target).pytest_addoption


def test_collects_one_item_per_case_with_agent_and_eval_set_in_the_node_id(example):
    done = _pytest(example, "--eval-gate", "eval-gate.yml", "--co")
    assert done.returncode == 0, done.stdout + done.stderr
    ids = [line for line in done.stdout.splitlines() if "::" in line]
    assert ids == [
        f"eval-gate.yml::hello_world::dice::{case}"
        for case in (
            "roll_6",
            "roll_20",
            "capabilities",
            "dice_then_primes",
            "roll_12_wrong_golden",
            "primes_paraphrased",
        )
    ]


def test_k_selects_cases_the_selected_ones_share_one_run_and_junit_records_each(example, tmp_path):
    junit, results = tmp_path / "junit.xml", tmp_path / "results.json"
    done = _pytest(
        example,
        "--eval-gate",
        "eval-gate.yml",
        "-k",
        "roll or primes_paraphrased",
        f"--junitxml={junit}",
        f"--eval-gate-output={results}",
    )
    assert done.returncode == 1, done.stdout + done.stderr
    assert _junit(junit) == {
        "eval-gate.yml.hello_world.dice::roll_6": "passed",
        "eval-gate.yml.hello_world.dice::roll_20": "passed",
        "eval-gate.yml.hello_world.dice::roll_12_wrong_golden": "failure",
        "eval-gate.yml.hello_world.dice::primes_paraphrased": "failure",
    }
    assert "adk-eval-gate: 4 case(s) in 1 run(s) of the agents" in done.stdout
    # The failure reads as the case's diff, not as a traceback into the plugin.
    assert "roll_12_wrong_golden: failed: tool_trajectory_avg_score 0 < 1" in done.stdout
    assert '    + actual tool calls:   roll_die({"sides": 12})' in done.stdout
    assert "pytest_plugin.py" not in done.stdout
    written = json.loads(results.read_text())
    assert sorted(c["eval_id"] for s in written["eval_sets"] for c in s["cases"]) == [
        "primes_paraphrased",
        "roll_12_wrong_golden",
        "roll_20",
        "roll_6",
    ]


def test_errored_and_not_evaluated_cases(tmp_path):
    (tmp_path / "crash.test.json").write_text(json.dumps([{"query": "please crash", "reference": "x"}]))
    (tmp_path / "echo.test.json").write_text(json.dumps([{"query": "hello", "reference": "echo: hello"}]))
    config = tmp_path / "eval-gate.yml"
    base = (
        # eval_history off: the agent folder is part of this repository's sources
        f"agents:\n  - name: faulty\n    target: {{kind: adk, agent: {FAULTY_AGENT}, eval_history: false}}\n"
        "    evalsets: ['*.test.json']\n    criteria: {{final_response_match_v2: 0.5}}\n"
    )
    config.write_text(base.replace("{{", "{").replace("}}", "}"))
    done = _pytest(tmp_path, "--eval-gate", str(config), "-rs")
    assert done.returncode == 1, done.stdout + done.stderr
    assert "1 failed, 1 skipped" in done.stdout
    assert "run 1 errored:" in done.stdout and "model exploded" in done.stdout
    assert "SKIPPED" in done.stdout and "not evaluated" in done.stdout
    # A config that gates on not-evaluated cases fails them instead of skipping them.
    config.write_text("gate: {fail_on: [error, not_evaluated]}\n" + base.replace("{{", "{").replace("}}", "}"))
    done = _pytest(tmp_path, "--eval-gate", str(config))
    assert "2 failed" in done.stdout, done.stdout


def test_a_bad_config_is_one_usage_line(tmp_path):
    config = tmp_path / "eval-gate.yml"
    config.write_text("agents:\n  - name: a\n    target: {kind: adk, agent: nowhere}\n    evalsets: [x.json]\n")
    done = _pytest(tmp_path, "--eval-gate", str(config))
    assert done.returncode == 4
    assert "ERROR: --eval-gate: " in done.stderr and "does not exist" in done.stderr
    assert "Traceback" not in done.stderr


def test_without_the_option_the_plugin_adds_nothing(example):
    (example / "test_plain.py").write_text("def test_plain():\n    pass\n")
    done = _pytest(example, "test_plain.py")
    assert done.returncode == 0 and "1 passed" in done.stdout and "adk-eval-gate" not in done.stdout, done.stdout


XDIST = importlib.util.find_spec("xdist") is not None


@pytest.mark.skipif(not XDIST, reason="pytest-xdist is not installed here")
@pytest.mark.parametrize("dist", ["load", "loadgroup"])
def test_pytest_xdist_runs_every_case_once(example, tmp_path, dist):
    junit, results = tmp_path / "junit.xml", tmp_path / "results.json"
    done = _pytest(
        example,
        "--eval-gate",
        "eval-gate.yml",
        "-n",
        "2",
        "--dist",
        dist,
        f"--junitxml={junit}",
        f"--eval-gate-output={results}",
    )
    assert done.returncode == 1, done.stdout + done.stderr
    verdicts = _junit(junit)
    assert len(verdicts) == 6 and sorted(verdicts.values()).count("failure") == 2
    per_worker = [json.loads(p.read_text()) for p in tmp_path.glob("results.gw*.json")]
    ran = sorted(c["eval_id"] for r in per_worker for s in r["eval_sets"] for c in s["cases"])
    assert len(ran) == 6 and len(set(ran)) == 6
