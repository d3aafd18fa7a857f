"""The replay target: ADK eval history (plain and double-encoded), evalset-shaped actuals, our own results."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from adk_eval_gate.commands.main import main
from adk_eval_gate.run.pipeline import run_plan
from adk_eval_gate.run.plan import build_plan
from tests.support.adk_required import adk

HISTORY = "recorded/dice.evalset_result.json"
CONFIG = "replay.yml"


def _adk_scores(history: Path) -> dict[str, dict[str, float]]:
    result = adk("evaluation.eval_result").EvalSetResult.model_validate_json(history.read_text())
    return {
        case.eval_id: {m.metric_name: m.score for m in case.overall_eval_metric_results if m.threshold is not None}
        for case in result.eval_case_results
    }


def _adk_statuses(history: Path) -> dict[str, str]:
    result = adk("evaluation.eval_result").EvalSetResult.model_validate_json(history.read_text())
    return {case.eval_id: case.final_eval_status.name.lower() for case in result.eval_case_results}


def test_replaying_adk_history_reproduces_adk_scores_and_statuses(example):
    results = run_plan(build_plan(example / CONFIG))
    ours = {c.eval_id: {n: m.score for n, m in c.metrics.items()} for c in results.eval_sets[0].cases}
    assert ours == _adk_scores(example / HISTORY)  # exact equality, not approximate
    assert {c.eval_id: c.status for c in results.eval_sets[0].cases} == _adk_statuses(example / HISTORY)


def test_double_encoded_history_from_old_adk_is_read(example):
    history = example / HISTORY
    history.write_text(json.dumps(history.read_text()))  # ADK <= 1.21 wrote a JSON string holding the JSON
    results = run_plan(build_plan(example / CONFIG))
    assert results.summary.passed == 4 and results.summary.failed == 2


def test_history_directory_uses_newest_file_first(example):
    history_dir = example / "recorded" / "eval_history"
    history_dir.mkdir()
    data = json.loads((example / HISTORY).read_text())
    old = dict(data, creation_timestamp=1.0)
    new = json.loads(json.dumps(data))
    new["creation_timestamp"] = 2.0
    # In the newest run the agent got roll_12 right: replace its actual calls with the expected ones.
    for case in new["eval_case_results"]:
        if case["eval_id"] == "roll_12_wrong_golden":
            for row in case["eval_metric_result_per_invocation"]:
                row["actual_invocation"]["intermediate_data"] = row["expected_invocation"]["intermediate_data"]
    (history_dir / "a_old.evalset_result.json").write_text(json.dumps(old))
    (history_dir / "b_new.evalset_result.json").write_text(json.dumps(new))
    config = example / CONFIG
    config.write_text(config.read_text().replace(HISTORY, "recorded/eval_history"))
    results = run_plan(build_plan(config))
    case = next(c for c in results.eval_sets[0].cases if c.eval_id == "roll_12_wrong_golden")
    assert case.metrics["tool_trajectory_avg_score"].score == 1.0


def test_two_recorded_runs_pool_like_agent_evaluator(example):
    """AgentEvaluator(num_runs=2) stores every run's result in one file with repeated eval_ids."""
    history = example / HISTORY
    data = json.loads(history.read_text())
    first = json.loads(json.dumps(data["eval_case_results"]))
    for case in first:
        if case["eval_id"] == "roll_6":
            for row in case["eval_metric_result_per_invocation"]:
                row["actual_invocation"]["intermediate_data"] = {"tool_uses": [], "tool_responses": []}
    data["eval_case_results"] = first + data["eval_case_results"]
    history.write_text(json.dumps(data))
    config = example / CONFIG
    config.write_text(config.read_text().replace("num_runs: 1", "num_runs: 2"))
    results = run_plan(build_plan(config))
    case = next(c for c in results.eval_sets[0].cases if c.eval_id == "roll_6")
    metric = case.metrics["tool_trajectory_avg_score"]
    assert [r.score for r in metric.runs] == [0.0, 1.0]
    assert metric.score == 0.5 and metric.status == "failed"
    assert len(case.runs) == 2 and all(r.actual_invocations for r in case.runs)


def test_missing_run_is_an_error_with_a_reason(example):
    config = example / CONFIG
    config.write_text(config.read_text().replace("num_runs: 1", "num_runs: 2"))
    results = run_plan(build_plan(config))
    case = results.eval_sets[0].cases[0]
    assert case.status == "error"
    assert "1 of 2 runs errored" in case.reason and "only 1 recorded run" in case.reason
    # the run that exists is still scored and kept
    assert case.metrics["tool_trajectory_avg_score"].runs[0].score == 1.0


def test_case_absent_from_actuals_is_error_others_scored(example):
    history = example / HISTORY
    data = json.loads(history.read_text())
    data["eval_case_results"] = [c for c in data["eval_case_results"] if c["eval_id"] != "capabilities"]
    history.write_text(json.dumps(data))
    results = run_plan(build_plan(example / CONFIG))
    statuses = {c.eval_id: c.status for c in results.eval_sets[0].cases}
    assert statuses["capabilities"] == "error"
    assert statuses["roll_6"] == "passed"
    assert results.summary.error == 1 and results.summary.passed == 3


def test_crashed_inference_in_history_is_error(example):
    history = example / HISTORY
    data = json.loads(history.read_text())
    for case in data["eval_case_results"]:
        if case["eval_id"] == "roll_20":
            case.update(final_eval_status=2, overall_eval_metric_results=[], eval_metric_result_per_invocation=[])
    history.write_text(json.dumps(data))
    results = run_plan(build_plan(example / CONFIG))
    case = next(c for c in results.eval_sets[0].cases if c.eval_id == "roll_20")
    assert case.status == "error" and "inference failed" in case.reason


def test_newer_adk_fields_in_recorded_invocations_are_tolerated(example):
    history = example / HISTORY
    data = json.loads(history.read_text())
    for case in data["eval_case_results"]:
        for row in case["eval_metric_result_per_invocation"]:
            row["actual_invocation"]["field_from_adk_3"] = {"x": 1}
    history.write_text(json.dumps(data))
    assert run_plan(build_plan(example / CONFIG)).summary.passed == 4


def test_evalset_shaped_actuals_and_results_file_round_trip(example, tmp_path):
    out = tmp_path / "results.json"
    assert main(["run", "--config", str(example / CONFIG), "--output", str(out), "--quiet"]) == 1
    # Our own results file is itself a valid source of actuals: replaying it reproduces every score.
    config = example / CONFIG
    config.write_text(config.read_text().replace(HISTORY, str(out)))
    again = run_plan(build_plan(config))
    first = json.loads(out.read_text())
    assert [c.model_dump()["metrics"] for c in again.eval_sets[0].cases] == [
        c["metrics"] for c in first["eval_sets"][0]["cases"]
    ]
    # An evalset-shaped file of actual invocations works too.
    actual_set = {
        "eval_set_id": "whatever",
        "eval_cases": [
            {"eval_id": c["eval_id"], "conversation": c["runs"][0]["actual_invocations"]}
            for c in first["eval_sets"][0]["cases"]
        ],
    }
    (example / "actual.evalset.json").write_text(json.dumps(actual_set))
    config.write_text(config.read_text().replace(str(out), "actual.evalset.json"))
    assert run_plan(build_plan(config)).summary.passed == 4


# What a process imports, asked of a fresh interpreter: the run (CLI), then the modules loaded by then.
_LOADED_AFTER_RUN = """
import json, sys
from adk_eval_gate.commands.main import main
main(["run", "--config", sys.argv[1], "--output", sys.argv[2], "--quiet"])
print(json.dumps(sorted(sys.modules)))
"""


def loaded_after_run(config: Path, output: Path) -> set[str]:
    done = subprocess.run(
        [sys.executable, "-c", _LOADED_AFTER_RUN, str(config), str(output)],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "ADK_DISABLE_LOAD_DOTENV": "1"},
    )
    assert output.is_file(), done.stderr
    return set(json.loads(done.stdout.strip().splitlines()[-1]))


def test_a_replay_run_imports_no_agent_runtime_and_no_nltk_package(example, tmp_path):
    """google-adk, nltk's package (numpy and most of nltk) and rouge-score's scorer only load where they are used:
    replaying recorded runs scored by ROUGE and trajectory needs none of them."""
    loaded = loaded_after_run(example / CONFIG, tmp_path / "r.json")
    assert not {m for m in loaded if m.split(".")[0] in ("nltk", "numpy") or m.startswith("google.adk")}
    assert "rouge_score.rouge_scorer" not in loaded
