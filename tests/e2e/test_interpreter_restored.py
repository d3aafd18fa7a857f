"""A run leaves the interpreter as it found it (issue #30): `ci` called twice in one process (a test suite, the
pytest plugin, an integration) finds the same sys.path, environment and collector settings after each call as
before, and the second run gets a GitHub budget of its own. Real parts: the bundled example's ADK agent with its
scripted model, a custom metric imported from the working folder (which puts that folder on sys.path for the run)."""

from __future__ import annotations

import gc
import json
import os
import sys
from pathlib import Path

import pytest

from adk_eval_gate.commands.main import main
from adk_eval_gate.core.held_tokens import is_github_token_name

METRIC = """
from google.adk.evaluation.evaluator import EvalStatus, EvaluationResult, PerInvocationResult


def always(eval_metric, actual_invocations, expected_invocations, conversation_scenario):
    per = [PerInvocationResult(actual_invocation=a, score=1.0, eval_status=EvalStatus.PASSED)
           for a in actual_invocations]
    return EvaluationResult(overall_score=1.0, per_invocation_results=per, overall_eval_status=EvalStatus.PASSED)
"""


def interpreter() -> dict[str, object]:
    """What a run could leave changed: tokens the holder takes out for the call are put back by it (held_tokens)."""
    return {
        "sys.path": list(sys.path),
        "environ": {k: v for k, v in os.environ.items() if not is_github_token_name(k)},
        "gc.enabled": gc.isenabled(),
        "gc.threshold": gc.get_threshold(),
        "gc.frozen": gc.get_freeze_count(),
    }


@pytest.fixture
def project(example: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (example / "always_metric.py").write_text(METRIC)
    config = json.loads((example / "evals" / "eval_config.json").read_text())
    config["criteria"]["always"] = 0.5
    config["custom_metrics"] = {"always": {"code_config": {"name": "always_metric.always"}}}
    (example / "evals" / "eval_config.json").write_text(json.dumps(config))
    gate = example / "eval-gate.yml"
    gate.write_text(gate.read_text().replace("num_runs: {min: 2, max: 10}", "num_runs: 1"))
    for name in [n for n in os.environ if n.startswith("GITHUB_")]:
        monkeypatch.delenv(name)  # a local run: nothing posted, the metric in this process
    monkeypatch.chdir(example)  # the metric's module is found here, as `adk eval` finds it beside the agents
    return example


def test_ci_twice_in_one_process_leaves_the_interpreter_as_it_was(project: Path, capsys: pytest.CaptureFixture[str]):
    assert str(project) not in sys.path
    before = interpreter()
    for attempt in (1, 2):
        code = main(["ci", "--config", "eval-gate.yml", "--output-dir", f"out{attempt}", "--quiet"])
        capsys.readouterr()
        assert code in (0, 1)
        cases = json.loads((project / f"out{attempt}" / "results.json").read_text())["eval_sets"][0]["cases"]
        assert {c["metrics"]["always"]["score"] for c in cases} == {1.0}  # the metric was imported and ran
        after = interpreter()
        changed = {k: (before[k], after[k]) for k in before if before[k] != after[k]}
        assert not changed, f"run {attempt} left the interpreter changed: {changed}"


def test_run_twice_in_one_process_leaves_the_collector_as_it_was(project: Path, capsys: pytest.CaptureFixture[str]):
    """`run` freezes what it loaded and raises the collector's thresholds for the run: both come back."""
    before = interpreter()
    for attempt in (1, 2):
        code = main(["run", "--config", "eval-gate.yml", "--output", f"run{attempt}.json", "--quiet"])
        capsys.readouterr()
        assert code in (0, 1) and (project / f"run{attempt}.json").exists()
        after = interpreter()
        changed = {k: (before[k], after[k]) for k in before if before[k] != after[k]}
        assert not changed, f"run {attempt} left the interpreter changed: {changed}"


def test_a_process_that_ends_with_the_command_skips_the_restoring(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The Action's container entry (`own_process=True`) ends with the command: handing the run's frozen objects
    back to the collector there would only buy a full collection of them at exit, so it is not done."""
    before = gc.get_threshold()
    try:
        code = main(["run", "--config", "eval-gate.yml", "--output", "own.json", "--quiet"], own_process=True)
        capsys.readouterr()
        assert code in (0, 1) and (project / "own.json").exists()
        assert gc.get_threshold() != before or gc.get_freeze_count() > 0  # what `run` set for itself was kept
    finally:
        gc.unfreeze()
        gc.set_threshold(*before)
        gc.enable()
