"""Comparison verdicts and the gate's decision, on real results of the example agent."""

from __future__ import annotations

import json

import jsonschema
import pytest

from adk_eval_gate.baseline.stores import LoadedBaseline, LoadOutcome, identity_of
from adk_eval_gate.commands.main import main
from adk_eval_gate.commands.schema import SHIPPED, json_schema_text
from adk_eval_gate.config.workflow_settings import GateSettings
from adk_eval_gate.gate.comparison_file import build_comparison
from adk_eval_gate.run.pipeline import run_plan
from adk_eval_gate.run.plan import build_plan


@pytest.fixture(scope="module")
def five_runs(tmp_path_factory):
    import shutil

    from tests.conftest import EXAMPLE

    root = tmp_path_factory.mktemp("five")
    shutil.copytree(EXAMPLE, root / "ex", ignore=shutil.ignore_patterns("__pycache__", ".adk"))
    config = root / "ex" / "eval-gate.yml"
    config.write_text(config.read_text().replace("num_runs: {min: 2, max: 10}", "num_runs: 5"))
    return run_plan(build_plan(config), quiet=True)


def outcome(results):
    return LoadOutcome(LoadedBaseline(results, identity_of(results, "test")))


def degrade(results, eval_id: str, criterion: str = "tool_trajectory_avg_score"):
    copy = results.model_copy(deep=True)
    case = next(c for c in copy.eval_sets[0].cases if c.eval_id == eval_id)
    metric = case.metrics[criterion]
    for run in metric.runs:
        run.score, run.status = 0.0, "failed"
        for item in run.per_invocation:
            item.score, item.status = 0.0, "failed"
    metric.score, metric.status, case.status = 0.0, "failed", "failed"
    return copy


def summary(comparison, criterion="tool_trajectory_avg_score"):
    return next(s for s in comparison.summaries if s.criterion == criterion)


def test_same_results_are_unchanged_and_pass(five_runs):
    comparison = build_comparison(five_runs, outcome(five_runs), GateSettings())
    assert comparison.verdict == "pass"
    assert {s.verdict for s in comparison.summaries} == {"unchanged"}
    assert {r.verdict for r in comparison.rows} == {"unchanged"}


def test_a_real_regression_fails_the_gate_and_is_explained(five_runs):
    current = degrade(degrade(five_runs, "roll_6"), "dice_then_primes")
    comparison = build_comparison(current, outcome(five_runs), GateSettings())
    s = summary(comparison)
    assert s.verdict == "regressed" and s.p_value < 0.01 and s.delta < -0.05
    assert "dropped" in s.reason and "p =" in s.reason
    assert comparison.verdict == "fail" and comparison.gate.failures[0].text.startswith(
        "regression: hello_world/dice tool_trajectory_avg_score"
    )
    rows = {r.eval_id: r for r in comparison.rows if r.criterion == "tool_trajectory_avg_score"}
    assert rows["roll_6"].verdict == "regressed" and rows["roll_6"].baseline_samples == 5
    assert rows["roll_20"].verdict == "unchanged"


def test_override_label_passes_with_a_visible_note(five_runs):
    current = degrade(degrade(five_runs, "roll_6"), "dice_then_primes")
    gate = GateSettings()
    comparison = build_comparison(current, outcome(five_runs), gate, labels=[gate.override_label])
    assert comparison.verdict == "pass" and comparison.gate.overridden
    assert "accepted by the 'adk-eval-gate: accept regression' label" in comparison.gate.reason


def test_first_run_has_everything_new_and_passes_unless_policy_says_otherwise(five_runs):
    comparison = build_comparison(five_runs, LoadOutcome(None, ["no baseline yet"]), GateSettings())
    assert comparison.verdict == "pass" and {r.verdict for r in comparison.rows} == {"new"}
    assert comparison.warnings == ["no baseline yet"] and "no baseline yet" in comparison.gate.reason
    strict = build_comparison(five_runs, LoadOutcome(None, []), GateSettings(fail_on=["regression", "no_baseline"]))
    assert strict.verdict == "fail"


def test_edited_case_and_changed_criterion_are_not_comparable(five_runs):
    current = five_runs.model_copy(deep=True)
    current.eval_sets[0].cases[0].case_hash = "edited"
    current.eval_sets[0].criteria["response_match_score"].hash = "changed"
    current.eval_sets[0].criteria["response_match_score"].threshold = 0.7
    comparison = build_comparison(current, outcome(five_runs), GateSettings())
    rows = [r for r in comparison.rows if r.eval_id == current.eval_sets[0].cases[0].eval_id]
    assert {r.verdict for r in rows} == {"not_comparable"}
    assert "edited since the baseline" in rows[0].reason
    response_rows = [r for r in comparison.rows if r.criterion == "response_match_score"]
    assert all(r.verdict == "not_comparable" for r in response_rows)
    assert any("threshold 0.8 → 0.7" in r.reason for r in response_rows)
    assert summary(comparison, "response_match_score").verdict == "not_comparable"


def test_new_and_removed_cases(five_runs):
    current = five_runs.model_copy(deep=True)
    removed = current.eval_sets[0].cases.pop(0)
    added = current.eval_sets[0].cases[0].model_copy(deep=True)
    added.eval_id = "brand_new"
    current.eval_sets[0].cases.append(added)
    comparison = build_comparison(current, outcome(five_runs), GateSettings())
    verdicts = {(r.eval_id, r.verdict) for r in comparison.rows}
    assert ("brand_new", "new") in verdicts and (removed.eval_id, "removed") in verdicts
    assert summary(comparison).cases_new == 1 and summary(comparison).cases_removed == 1


def test_one_sample_a_side_is_not_evidence_alone_and_says_where_it_counts(example):
    config = example / "eval-gate.yml"
    config.write_text(config.read_text().replace("num_runs: {min: 2, max: 10}", "num_runs: 1"))
    single = run_plan(build_plan(config), quiet=True)
    current = degrade(single, "roll_6")
    comparison = build_comparison(current, outcome(single), GateSettings())
    row = next(r for r in comparison.rows if r.eval_id == "roll_6" and r.criterion == "tool_trajectory_avg_score")
    assert row.verdict == "inconclusive" and row.p_value is None
    assert "one sample a side" in row.reason and "counted in the eval-set verdict" in row.reason
    # one broken case of six, one run each: p = 0.5 at best, so nothing claims a regression; but six cases × one run
    # can confirm no drop at all, so the gate cannot know, and by default that is not a pass
    assert summary(comparison).verdict == "inconclusive" and summary(comparison).unconfirmed
    assert not any(r.verdict == "regressed" for r in comparison.rows)
    assert comparison.verdict == "fail" and comparison.gate.failures[0].text.startswith("unconfirmed: hello_world/dice")
    assert comparison.power[0].weak and comparison.power[0].suggestion == "num_runs: {min: 2, max: 7}"
    warned = build_comparison(current, outcome(single), GateSettings(unconfirmed="warn"))
    assert warned.verdict == "pass" and warned.gate.unconfirmed == 1 and "unconfirmed" in warned.gate.reason


def test_policy_conditions(five_runs):
    errored = five_runs.model_copy(deep=True)
    errored.eval_sets[0].cases[0].status, errored.eval_sets[0].cases[0].reason = "error", "agent crashed"
    assert build_comparison(errored, outcome(five_runs), GateSettings()).gate.failures[0].text.startswith("error:")
    assert build_comparison(five_runs, outcome(five_runs), GateSettings(fail_on=["threshold"])).verdict == "fail"
    assert (
        build_comparison(five_runs, outcome(five_runs), GateSettings(fail_on=[], min_pass_rate=0.9)).verdict == "fail"
    )
    assert (
        build_comparison(five_runs, outcome(five_runs), GateSettings(fail_on=[], min_pass_rate=0.5)).verdict == "pass"
    )


def test_compare_cli_writes_a_schema_valid_comparison_and_exits_by_policy(five_runs, tmp_path, capsys):
    base, cur, out = tmp_path / "base.json", tmp_path / "cur.json", tmp_path / "comparison.json"
    base.write_text(five_runs.model_dump_json())
    cur.write_text(degrade(degrade(five_runs, "roll_6"), "dice_then_primes").model_dump_json())
    assert main(["compare", "--results", str(cur), "--baseline", str(base), "--output", str(out)]) == 1
    printed = capsys.readouterr().out
    assert printed.startswith("Gate: FAIL") and "REGRESSED" in printed and "Cases behind the regressions:" in printed
    data = json.loads(out.read_text())
    jsonschema.validate(data, json.loads(SHIPPED["comparison"].read_text()))
    assert data["schema_version"] == 2 and data["verdict"] == "fail"
    assert {"agent", "eval_set_id", "eval_id", "criterion", "baseline", "current", "delta", "verdict", "reason"} <= set(
        data["rows"][0]
    )
    assert (
        main(
            [
                "compare",
                "--results",
                str(cur),
                "--baseline",
                str(base),
                "--output",
                str(out),
                "--label",
                "adk-eval-gate: accept regression",
            ]
        )
        == 0
    )


def test_shipped_comparison_schema_is_generated_from_the_models():
    assert SHIPPED["comparison"].read_text() == json_schema_text("comparison")


def test_a_case_drop_that_does_not_gate_is_never_shown_as_behind_a_regression(five_runs, capsys):
    from adk_eval_gate.report.console import render_comparison
    from adk_eval_gate.report.markdown import render_report

    # roll_6 breaks while roll_20 recovers: the eval set as a whole is unchanged, roll_6 alone is significant
    baseline, current = degrade(five_runs, "roll_20"), degrade(five_runs, "roll_6")
    comparison = build_comparison(current, outcome(baseline), GateSettings())
    row = next(r for r in comparison.rows if r.eval_id == "roll_6" and r.criterion == "tool_trajectory_avg_score")
    assert row.verdict == "regressed" and not row.gating and summary(comparison).verdict == "unchanged"
    assert "not gating (gate.fail_on lacks case_regression)" in row.reason
    assert comparison.verdict == "pass"
    printed = render_comparison(comparison)
    assert printed.startswith("Gate: PASS") and "Cases behind the regressions" not in printed
    assert "Case drops that did not fail the gate:" in printed and "roll_6 tool_trajectory_avg_score" in printed
    markdown = render_report(comparison, current, {})
    assert markdown.startswith("## ✅") and "Cases behind the regressions" not in markdown
    assert "### Case drops that did not fail the gate (1)" in markdown and "not gating" in markdown
    # the same rows gate once the policy says case regressions count
    strict = build_comparison(current, outcome(baseline), GateSettings(fail_on=["regression", "case_regression"]))
    assert strict.verdict == "fail" and "### Cases behind the regressions" in render_report(strict, current, {})


def test_a_comparison_file_written_before_pooled_verdicts_still_loads(five_runs):
    from adk_eval_gate.baseline.comparison_format import Comparison

    data = json.loads(build_comparison(five_runs, outcome(five_runs), GateSettings()).model_dump_json())
    del data["pooled"], data["gate"]["notes"]  # and, in version 1, the failures were their sentences alone
    data["schema_version"], data["gate"]["failures"] = 1, [f["text"] for f in data["gate"]["failures"]]
    for item in [*data["summaries"], *data["rows"]]:
        del item["gating"]
    old = Comparison.model_validate(data)
    assert old.pooled == [] and old.schema_version == 1 and not any(r.gating for r in old.rows)
