"""The multi-turn Vertex AI metrics on a real run of the example agent, against a fake evaluation service."""

from __future__ import annotations

import json
import shutil

from adk_eval_gate.commands.main import main
from tests.unit.criteria.test_vertex_metrics import scored, vertex  # noqa: F401 (fixture)


def test_a_real_agents_run_is_judged_end_to_end(example, vertex, tmp_path, monkeypatch):  # noqa: F811
    """hello_world through google-adk's runner; the whole dialogue, tool calls included, reaches the service."""
    config = json.loads((example / "evals" / "eval_config.json").read_text())
    config["criteria"] |= {"multi_turn_task_success_v1": 0.6}
    (example / "evals" / "eval_config.json").write_text(json.dumps(config))
    vertex.replies = {"13, 17 are prime numbers.": scored(0.4)}  # whatever else answers 0.5
    gate = example / "eval-gate.yml"
    gate.write_text(gate.read_text().replace("num_runs: {min: 2, max: 10}", "num_runs: 1"))  # one call per case
    monkeypatch.chdir(example)
    out = tmp_path / "r.json"
    main(["run", "--config", str(example / "eval-gate.yml"), "--output", str(out), "--quiet"])
    cases = {c["eval_id"]: c for c in json.loads(out.read_text())["eval_sets"][0]["cases"]}
    metric = {k: c["metrics"]["multi_turn_task_success_v1"] for k, c in cases.items()}
    assert all(m["status"] == "failed" for m in metric.values())  # 0.5 and 0.4 are both under 0.6
    assert metric["dice_then_primes"]["score"] == 0.4 and metric["roll_6"]["score"] == 0.5
    # The first turn is not scored on its own.
    assert metric["dice_then_primes"]["per_invocation"] == [None, 0.4]
    bodies = [r["body"] for r in vertex.requests]
    assert len(bodies) == len(cases)
    calls = [
        p["function_call"]["name"]
        for b in bodies
        for t in b["instance"]["agent_eval_data"]["turns"]
        for e in t["events"]
        for p in e.get("content", {}).get("parts", [])
        if "function_call" in p
    ]
    assert "roll_die" in calls and "check_prime" in calls
    shutil.rmtree(example / ".adk", ignore_errors=True)


def test_validate_names_what_the_vertex_metrics_need(example, monkeypatch, capsys):
    for name in (
        "GOOGLE_API_KEY",
        "GOOGLE_CLOUD_PROJECT",
        "GOOGLE_CLOUD_LOCATION",
        "GOOGLE_GENAI_USE_VERTEXAI",
    ):
        monkeypatch.delenv(name, raising=False)
    config = json.loads((example / "evals" / "eval_config.json").read_text())
    config["criteria"] |= {"multi_turn_tool_use_quality_v1": 0.5, "response_evaluation_score": 4}
    (example / "evals" / "eval_config.json").write_text(json.dumps(config))
    assert main(["validate", "--config", str(example / "eval-gate.yml")]) == 0
    out = capsys.readouterr().out
    assert (
        "note: multi_turn_tool_use_quality_v1 runs on the Vertex AI evaluation service and needs a Google Cloud" in out
    )
    assert "note: response_evaluation_score runs on the Vertex AI evaluation service and needs a Google" in out
    monkeypatch.setenv("GOOGLE_CLOUD_PROJECT", "p")
    monkeypatch.setenv("GOOGLE_CLOUD_LOCATION", "us-central1")
    assert main(["validate", "--config", str(example / "eval-gate.yml")]) == 0
    out = capsys.readouterr().out
    assert "note: multi_turn_tool_use_quality_v1" not in out and "note: response_evaluation_score" not in out
