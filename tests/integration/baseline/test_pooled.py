"""Pooled verdicts: many small eval sets, each too small to say anything alone, still gate together.

The layout is the most common real one: legacy `.test.json` files, one case each, `num_runs: 1`, the bundled
default criteria. The agent is the example's, run through google-adk's real Runner; its broken copy answers the
same but no longer calls the tool (trajectory 1.0 → 0.0 on every file).
"""

from __future__ import annotations

import json
import random

import jsonschema
import pytest

from adk_eval_gate.baseline.compare import decide_gating
from adk_eval_gate.baseline.comparison_format import Comparison, PooledSummary, Summary
from adk_eval_gate.baseline.stats import stratified_test
from adk_eval_gate.commands.main import main
from adk_eval_gate.commands.schema import SHIPPED
from adk_eval_gate.gate.reasons import reason
from adk_eval_gate.report.markdown import render_report
from adk_eval_gate.results.results_format import ResultsFile
from tests.conftest import EXAMPLE

SIDES = (4, 6, 8, 10, 12, 20, 30, 50, 64, 100)
ROLL_BRANCH = """            call = types.FunctionCall(name="roll_die", args={"sides": int(match.group(1))})
            yield _response(types.Part(function_call=call))"""
# the same answer, but made up without calling the tool
NO_TOOL = """            sides = int(match.group(1))
            yield _response(types.Part(text=f"I rolled a {sides} sided die and got {roll_die(sides)}."))"""


def project(root, broken: bool):
    root.mkdir(parents=True)
    source = (EXAMPLE / "hello_world" / "agent.py").read_text()
    assert ROLL_BRANCH in source
    (root / "hello_world").mkdir()
    (root / "hello_world" / "__init__.py").write_text((EXAMPLE / "hello_world" / "__init__.py").read_text())
    (root / "hello_world" / "agent.py").write_text(source.replace(ROLL_BRANCH, NO_TOOL) if broken else source)
    (root / "tests").mkdir()
    for sides in SIDES:
        turn = {
            "query": f"Roll a {sides} sided die",
            "expected_tool_use": [{"tool_name": "roll_die", "tool_input": {"sides": sides}}],
            "reference": f"I rolled a {sides} sided die and got {random.Random(sides).randint(1, sides)}.",
        }
        (root / "tests" / f"roll_{sides}.test.json").write_text(json.dumps([turn]))
    (root / "eval-gate.yml").write_text(
        "agents:\n  - name: dice\n    target: {kind: adk, agent: hello_world}\n"
        "    evalsets: [tests/*.test.json]\n    num_runs: 1\n"
    )
    return root / "eval-gate.yml"


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    root = tmp_path_factory.mktemp("pooled")
    out = {}
    for name, broken in (("base", False), ("same", False), ("broken", True)):
        config = project(root / name, broken)
        out[name] = root / f"{name}.json"
        main(["run", "--config", str(config), "--output", str(out[name]), "--quiet"])
        assert out[name].exists()
    return out


def compare(runs, current, tmp_path, capsys):
    output = tmp_path / "comparison.json"
    code = main(["compare", "--results", str(runs[current]), "--baseline", str(runs["base"]), "--output", str(output)])
    data = json.loads(output.read_text())
    jsonschema.validate(data, json.loads(SHIPPED["comparison"].read_text()))
    return code, Comparison.model_validate(data), capsys.readouterr().out


def test_the_layout_is_ten_one_case_sets_each_dropping_one_to_zero(runs):
    base = ResultsFile.model_validate_json(runs["base"].read_text())
    broken = ResultsFile.model_validate_json(runs["broken"].read_text())
    assert len(base.eval_sets) == 10 and all(len(s.cases) == 1 and s.num_runs == 1 for s in base.eval_sets)
    assert {s.cases[0].metrics["tool_trajectory_avg_score"].score for s in base.eval_sets} == {1.0}
    assert {s.cases[0].metrics["tool_trajectory_avg_score"].score for s in broken.eval_sets} == {0.0}


def test_ten_one_case_files_that_all_broke_fail_the_gate_through_the_pooled_verdict(runs, tmp_path, capsys):
    code, comparison, printed = compare(runs, "broken", tmp_path, capsys)
    assert code == 1 and comparison.verdict == "fail"
    pooled = {p.criterion: p for p in comparison.pooled}
    trajectory = pooled["tool_trajectory_avg_score"]
    assert trajectory.verdict == "regressed" and trajectory.gating
    assert trajectory.eval_sets_compared == 10 and trajectory.cases_compared == 10
    assert trajectory.p_value == pytest.approx(2**-10)  # exact: every sign flip of ten one-sample cases
    assert "exact" in trajectory.reason and "10 cases in 10 eval sets" in trajectory.reason
    assert comparison.gate.failures[0].text.startswith("regression: dice (all 10 eval sets) tool_trajectory_avg_score")
    # no eval set alone could have shown it, and each says so and where it counts
    sets = [s for s in comparison.summaries if s.criterion == "tool_trajectory_avg_score"]
    assert {s.verdict for s in sets} == {"inconclusive"} and not any(s.gating for s in sets)
    assert all("at best p = 0.5" in s.reason and "counted in the pooled verdict" in s.reason for s in sets)
    rows = [r for r in comparison.rows if r.criterion == "tool_trajectory_avg_score"]
    assert all(
        r.verdict == "inconclusive"
        and "not enough evidence alone" in r.reason
        and "counted in the eval-set and pooled verdicts" in r.reason
        for r in rows
    )
    # console: verdict first, pooled line before the eval-set lines, the cases behind it listed
    lines = printed.splitlines()
    assert lines[0].startswith("Gate: FAIL")
    pooled_line = next(
        i for i, line in enumerate(lines) if "dice (all 10 eval sets) tool_trajectory_avg_score: REGRESSED" in line
    )
    assert pooled_line < next(i for i, line in enumerate(lines) if line.startswith("  dice/roll_"))
    behind = lines[lines.index("Cases behind the regressions:") + 1 :]
    assert sum("tool_trajectory_avg_score" in line for line in behind) == 10


def test_the_comment_puts_the_pooled_row_first_and_agrees_with_the_gate(runs, tmp_path, capsys):
    _, comparison, _ = compare(runs, "broken", tmp_path, capsys)
    results = ResultsFile.model_validate_json(runs["broken"].read_text())
    markdown = render_report(comparison, results, {})
    assert markdown.startswith("## ❌ adk-eval-gate failed")
    table = markdown[markdown.index("| Agent / eval set") :]
    first_row = table.splitlines()[2]
    assert (
        first_row.startswith("| **dice / all 10 eval sets** | tool\\_trajectory\\_avg\\_score")
        and "🔴 regressed" in first_row
    )
    assert "### Cases behind the regressions (10)" in markdown
    assert "Case drops that did not fail the gate" not in markdown


def test_the_same_agent_unchanged_passes(runs, tmp_path, capsys):
    code, comparison, printed = compare(runs, "same", tmp_path, capsys)
    assert code == 0 and comparison.verdict == "pass" and printed.startswith("Gate: PASS")
    assert {p.verdict for p in comparison.pooled} == {"unchanged"} and len(comparison.pooled) == 2
    assert "2 pooled over eval sets" in comparison.gate.reason
    assert "Cases behind the regressions" not in printed
    markdown = render_report(comparison, ResultsFile.model_validate_json(runs["same"].read_text()), {})
    assert markdown.startswith("## ✅ adk-eval-gate passed") and "Cases behind the regressions" not in markdown


def test_fewer_broken_files_than_the_evidence_can_confirm_are_unconfirmed_and_fail(runs, tmp_path, capsys):
    # three of ten broken, one run each: p = 1/8 at best. Neither the eval sets (one case, one run: nothing) nor the
    # pooled verdict (a clean break of fewer than 8 of its 10 cases) could confirm it, so the gate cannot know:
    # by default that fails (gate.unconfirmed: fail), and nothing claims a regression.
    broken = ResultsFile.model_validate_json(runs["broken"].read_text())
    base = ResultsFile.model_validate_json(runs["base"].read_text())
    mixed = base.model_copy(deep=True)
    mixed.eval_sets[:3] = [s.model_copy(deep=True) for s in broken.eval_sets[:3]]
    path = tmp_path / "mixed.json"
    path.write_text(mixed.model_dump_json())
    code, comparison, printed = compare({**runs, "mixed": path}, "mixed", tmp_path, capsys)
    assert code == 1 and comparison.verdict == "fail"
    trajectory = next(p for p in comparison.pooled if p.criterion == "tool_trajectory_avg_score")
    assert trajectory.verdict == "inconclusive" and trajectory.p_value == pytest.approx(1 / 8)
    assert trajectory.unconfirmed and trajectory.gating
    assert "touches at least 3 cases" in trajectory.reason and "clean break of 8 or more cases" in trajectory.reason
    broken_sets = [s for s in comparison.summaries if s.criterion == "tool_trajectory_avg_score" and s.delta]
    assert len(broken_sets) == 3 and all(s.unconfirmed for s in broken_sets)
    assert comparison.gate.failures[0].text.startswith("unconfirmed: dice (all 10 eval sets) tool_trajectory_avg_score")
    assert comparison.gate.unconfirmed == len(comparison.gate.failures)
    assert comparison.gate.settle.startswith("num_runs: {min: 2, max: ")
    assert not any(r.verdict == "regressed" for r in comparison.rows)
    assert "REGRESSED" not in printed
    assert "dice (all 10 eval sets) tool_trajectory_avg_score: UNCONFIRMED" in printed
    assert "Power, dice: " in printed and "all 10 eval sets: 10 cases × 1 run → confirms a drop of 8 cases" in printed
    markdown = render_report(comparison, mixed, {})
    assert markdown.startswith(f"## ❌ adk-eval-gate failed — {comparison.gate.unconfirmed} drop(s) unconfirmed")
    # the two pooled rows can confirm 8 broken cases; the one-case eval sets nothing
    assert comparison.power[0].family == 2 and not comparison.power[0].weak
    assert comparison.power[0].lines[-1].statement == (
        "all 10 eval sets: 10 cases × 1 run → confirms a drop of 8 cases / 80.0 points"
    )


def test_unconfirmed_warn_passes_the_check_but_never_reads_as_a_pass(runs, tmp_path, capsys):
    broken = ResultsFile.model_validate_json(runs["broken"].read_text())
    mixed = ResultsFile.model_validate_json(runs["base"].read_text())
    mixed.eval_sets[:3] = [s.model_copy(deep=True) for s in broken.eval_sets[:3]]
    path = tmp_path / "mixed.json"
    path.write_text(mixed.model_dump_json())
    config = project(tmp_path / "warn", broken=False)
    config.write_text(config.read_text() + "gate: {unconfirmed: warn}\n")
    output = tmp_path / "comparison.json"
    argv = ["compare", "--config", str(config), "--results", str(path), "--baseline", str(runs["base"])]
    assert main([*argv, "--output", str(output)]) == 0
    comparison = Comparison.model_validate_json(output.read_text())
    assert comparison.verdict == "pass" and comparison.gate.failures == [] and comparison.gate.unconfirmed > 0
    assert comparison.gate.reason.startswith(f"{comparison.gate.unconfirmed} drop(s) unconfirmed, not gating")
    markdown = render_report(comparison, mixed, {})
    assert "✅" not in markdown.splitlines()[0] and "passed" not in markdown.splitlines()[0]
    assert markdown.startswith(f"## ⚠️ adk-eval-gate: {comparison.gate.unconfirmed} drop(s) unconfirmed, not gating")
    assert "would settle it" in markdown and "🟡 unconfirmed" in markdown


def test_one_ci_run_tells_the_same_story_everywhere(runs, tmp_path, capsys, monkeypatch):
    """Exit code, console, report, comparison.json and the GitHub outputs of one `ci` run agree."""
    config = project(tmp_path / "pr", broken=True)
    config.write_text(config.read_text() + f"baseline: {{store: file, path: {runs['base']}}}\n")
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    monkeypatch.setenv("GITHUB_OUTPUT", str(tmp_path / "output.txt"))
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(tmp_path / "summary.md"))
    out = tmp_path / "out"
    code = main(["ci", "--config", str(config), "--output-dir", str(out), "--no-comment", "--quiet"])
    printed = capsys.readouterr().out
    lines = (tmp_path / "output.txt").read_text().splitlines()
    outputs = {line.split("<<")[0]: lines[i + 1] for i, line in enumerate(lines) if "<<" in line}
    comparison = Comparison.model_validate_json((out / "comparison.json").read_text())
    report = (out / "report.md").read_text()
    assert code == 1 and comparison.verdict == "fail"
    assert outputs["passed"] == "false" and outputs["verdict"] == "fail"
    assert outputs["regressions"] == "1" and outputs["regressed-cases"] == "10"
    assert report.startswith("## ❌ adk-eval-gate failed") and "### Cases behind the regressions (10)" in report
    assert "adk-eval-gate failed" in (tmp_path / "summary.md").read_text()
    assert "## ❌ adk-eval-gate failed" in printed and "✅" not in printed  # local mode prints the report


def _gate(eval_sets, alpha=0.01):
    common = {"agent": "a", "criterion": "c", "baseline": None, "current": None, "verdict": "unchanged", "reason": ""}
    family = []
    for i, strata in enumerate(eval_sets):
        test = stratified_test(strata)
        family.append((Summary(eval_set_id=f"s{i}", delta=test.delta, **common), test, 0.05))
    pooled_test = stratified_test([pair for strata in eval_sets for pair in strata])
    family.insert(0, (PooledSummary(delta=pooled_test.delta, **common), pooled_test, 0.05))
    return decide_gating(family, alpha)


def test_tests_that_can_never_reject_do_not_dilute_the_family():
    pooled, *sets = _gate([[([1.0], [0.0])]] * 10)
    assert pooled.verdict == "regressed" and pooled.p_value == pytest.approx(2**-10)  # family of one
    assert {s.verdict for s in sets} == {"inconclusive"} and all("at best p = 0.5" in reason(s) for s in sets)
    # eval sets that could reject stay in the family, even unchanged: ten of them make Holm multiply by 11
    steady = [([1.0, 0.0, 1.0, 0.0, 1.0], [1.0, 0.0, 1.0, 0.0, 1.0])] * 3
    eval_sets = [[([1.0], [0.0])]] * 10 + [steady] * 10
    raw = stratified_test([pair for strata in eval_sets for pair in strata]).p_drop
    pooled, *sets = _gate(eval_sets)
    assert pooled.p_value == pytest.approx(min(1.0, 11 * raw)) and raw < pooled.p_value


@pytest.mark.parametrize("cases, runs", [(1, 1), (1, 3), (3, 1), (3, 3)])
def test_no_change_rarely_fails_many_small_eval_sets(cases, runs):
    rng = random.Random(f"{cases}-{runs}")
    alarms = 0
    for _ in range(400):
        sets = []
        for _ in range(10):
            rates = [rng.choice([0.2, 0.6, 0.9, 0.99]) for _ in range(cases)]
            sets.append(
                [
                    ([float(rng.random() < r) for _ in range(runs)], [float(rng.random() < r) for _ in range(runs)])
                    for r in rates
                ]
            )
        alarms += any(row.verdict == "regressed" for row in _gate(sets))
    assert alarms / 400 <= 0.01 + 3 * (0.01 * 0.99 / 400) ** 0.5
