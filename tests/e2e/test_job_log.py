"""What the job log says: the verdict lines, annotation levels (only a gating case is an ::error), JUnit totals and
repository-relative paths, and bad input as an annotation inside Actions; on real results of the example agent."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import pytest

from adk_eval_gate.baseline.stores import LoadedBaseline, LoadOutcome, identity_of
from adk_eval_gate.commands.main import main
from adk_eval_gate.config.workflow_settings import GateSettings
from adk_eval_gate.gate.comparison_file import build_comparison
from adk_eval_gate.report.outputs import annotation_lines, junit_xml, verdict_lines
from adk_eval_gate.run.pipeline import run_plan
from adk_eval_gate.run.plan import build_plan
from tests.integration.baseline.test_compare import degrade


@pytest.fixture(scope="module")
def example_runs(tmp_path_factory):
    import shutil

    from tests.conftest import EXAMPLE

    root = tmp_path_factory.mktemp("repo")
    shutil.copytree(EXAMPLE, root / "agents" / "ex", ignore=shutil.ignore_patterns("__pycache__", ".adk"))
    config = root / "agents" / "ex" / "eval-gate.yml"
    config.write_text(config.read_text().replace("num_runs: {min: 2, max: 10}", "num_runs: 5"))
    return root, config, run_plan(build_plan(config), quiet=True)


def compare(results, current, fail_on):
    return build_comparison(
        current,
        LoadOutcome(LoadedBaseline(results, identity_of(results, "branch data: abc"))),
        GateSettings(fail_on=fail_on),
    )


def test_a_gating_regression_is_an_error_annotation_and_the_verdict_line_says_why(example_runs):
    root, config, results = example_runs
    current = degrade(degrade(results, "roll_6"), "dice_then_primes")
    comparison = compare(results, current, ["regression", "error"])
    assert comparison.verdict == "fail"
    first, second = verdict_lines(comparison, current, comment_url="https://github.com/o/r/pull/7#issuecomment-1")
    assert re.match(
        r"adk-eval-gate: FAIL — 1 regression \(hello_world/dice tool_trajectory_avg_score: 2 of 6 cases scored lower "
        r"\(dice_then_primes, roll_6\); dropped .+\) · "
        r"comment: https://github.com/o/r/pull/7#issuecomment-1$",
        first,
    ), first
    counts = current.summary  # as the results file states them
    assert second == (
        f"adk-eval-gate: 6 case(s): {counts.passed} passed, {counts.failed} failed, 0 error(s), 0 not evaluated"
        " · baseline: branch data: abc"
    )
    lines = annotation_lines(current, comparison, config.parent, root)
    errors = [line for line in lines if line.startswith("::error ")]
    assert len(errors) == 2 and all(
        line.startswith("::error file=agents/ex/evals/dice.evalset.json,line=") for line in errors
    )
    assert any("title=roll_6 regressed::tool_trajectory_avg_score" in line for line in errors)
    # the two cases that fail on the base branch too did not gate
    notices = [line for line in lines if line.startswith("::notice ")]
    assert len(notices) == 2 and all("failed (not gating)" in line for line in notices)


def test_a_regression_that_does_not_gate_is_a_warning_never_an_error(example_runs):
    root, config, results = example_runs
    current = degrade(degrade(results, "roll_6"), "dice_then_primes")
    comparison = compare(results, current, ["error"])
    assert comparison.verdict == "pass"
    lines = annotation_lines(current, comparison, config.parent, root)
    assert not [line for line in lines if line.startswith("::error")]
    assert sum(line.startswith("::warning ") and "regressed (not gating)" in line for line in lines) == 2
    (first, _) = verdict_lines(comparison, current)
    assert (
        first.startswith("adk-eval-gate: PASS — no failing condition (error)")
        and "1 regression(s) reported but not gating" in first
    )
    assert "comment:" not in first


def test_junit_totals_on_the_root_and_paths_from_the_repository_root(example_runs):
    root, config, results = example_runs
    current = degrade(results, "roll_6")
    tree = ET.fromstring(junit_xml(current, compare(results, current, ["regression"]), config.parent, root))
    suites = list(tree)
    for name in ("tests", "failures", "errors", "skipped"):
        assert int(tree.get(name)) == sum(int(s.get(name)) for s in suites)
    assert (tree.get("tests"), tree.get("failures")) == ("6", "3")
    assert len(tree.findall(".//failure")) == 3  # the counts are the elements
    assert float(tree.get("time")) == pytest.approx(sum(float(s.get("time")) for s in suites), abs=0.01)
    assert {c.get("file") for c in tree.iter("testcase")} == {"agents/ex/evals/dice.evalset.json"}


def test_bad_input_inside_actions_is_an_annotation_and_a_plain_line_elsewhere(
    example_runs, tmp_path, monkeypatch, capsys
):
    config = tmp_path / "team" / "eval-gate.yml"
    config.parent.mkdir()
    config.write_text(
        "agents:\n  - name: a\n    target: {kind: adk, agent: x}\n    evalsets: [e.json]\n    nmu_runs: 2\n"
    )
    assert main(["validate", "--config", str(config)]) == 2
    plain = capsys.readouterr().err.strip()
    assert plain.startswith(f"error: {config}:5: agents[0].nmu_runs")
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    monkeypatch.setenv("GITHUB_WORKSPACE", str(tmp_path))
    assert main(["validate", "--config", str(config)]) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert line.startswith("::error file=team/eval-gate.yml,line=5,title=adk-eval-gate%3A bad input::")
    assert "agents[0].nmu_runs" in line
