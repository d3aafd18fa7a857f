"""The results file is a public contract: its shipped JSON Schema matches the models and validates real output."""

from __future__ import annotations

import json

import jsonschema

from adk_eval_gate.commands.main import main
from adk_eval_gate.commands.schema import json_schema_text
from adk_eval_gate.results.build import read_results
from tests.support.paths import ROOT

SHIPPED = ROOT / "src" / "adk_eval_gate" / "results" / "results.schema.json"


def test_shipped_schema_is_generated_from_the_models():
    assert SHIPPED.read_text() == json_schema_text("results"), "run `make schema` and commit the result"


def test_cli_prints_the_same_schema(capsys):
    assert main(["schema", "results"]) == 0
    assert capsys.readouterr().out == SHIPPED.read_text()


def test_results_file_validates_against_schema_and_has_the_contract_fields(example, tmp_path):
    out = tmp_path / "out" / "results.json"
    assert main(["run", "--config", str(example / "eval-gate.yml"), "--output", str(out), "--quiet"]) == 1
    data = json.loads(out.read_text())
    jsonschema.validate(data, json.loads(SHIPPED.read_text()))
    assert data["schema_version"] == 1
    assert data["tool"]["name"] == "adk-eval-gate" and data["tool"]["version"]
    assert {"sha", "ref"} <= set(data["git"]) and data["timings"]["duration_seconds"] >= 0
    eval_set = data["eval_sets"][0]
    assert {"agent", "eval_set_id", "file", "cases"} <= set(eval_set)
    assert eval_set["file"] == "evals/dice.evalset.json"  # relative to the config, stable across machines
    case = eval_set["cases"][0]
    assert case["status"] in {"passed", "failed", "not_evaluated", "error"}
    metric = case["metrics"]["tool_trajectory_avg_score"]
    assert {"score", "threshold", "status", "per_invocation", "runs"} <= set(metric)
    assert case["runs"][0]["actual_invocations"][0]["user_content"]["parts"][0]["text"]
    assert read_results(out).summary.total == 6


def test_schema_rejects_a_wrong_status(example, tmp_path):
    out = tmp_path / "r.json"
    main(["run", "--config", str(example / "eval-gate.yml"), "--output", str(out), "--quiet"])
    data = json.loads(out.read_text())
    data["eval_sets"][0]["cases"][0]["status"] = "PASSED"
    try:
        jsonschema.validate(data, json.loads(SHIPPED.read_text()))
    except jsonschema.ValidationError:
        return
    raise AssertionError("the schema accepted an unknown status")
