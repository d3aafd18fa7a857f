"""`response_evaluation_score` on a real run of the example agent, against the fake Storage and Vertex AI."""

from __future__ import annotations

import json

from adk_eval_gate.commands.main import main
from tests.unit.criteria.test_coherence import storage  # noqa: F401 (fixture)
from tests.unit.criteria.test_vertex_metrics import adk_sdk, scored, to_adk, turn, vertex  # noqa: F401 (fixtures)


def test_a_real_agents_run_is_scored_end_to_end(example, vertex, storage, tmp_path, monkeypatch):  # noqa: F811
    config = json.loads((example / "evals" / "eval_config.json").read_text())
    config["criteria"] |= {"response_evaluation_score": 4}
    (example / "evals" / "eval_config.json").write_text(json.dumps(config))
    vertex.replies = {"13, 17 are prime numbers.": scored(4.5)}  # whatever else answers 0.5
    monkeypatch.chdir(example)
    out = tmp_path / "r.json"
    main(["run", "--config", str(example / "eval-gate.yml"), "--output", str(out), "--quiet"])
    cases = {c["eval_id"]: c for c in json.loads(out.read_text())["eval_sets"][0]["cases"]}
    coherence = {k: c["metrics"]["response_evaluation_score"] for k, c in cases.items()}
    assert coherence["dice_then_primes"]["per_invocation"] == [0.5, 4.5]
    assert coherence["dice_then_primes"]["score"] == 2.5 and coherence["dice_then_primes"]["status"] == "failed"
    assert all(c["threshold"] == 4.0 for c in coherence.values())
    assert all("llm_based_metric_spec" in r["body"]["metrics"][0] for r in vertex.requests)
    assert len(storage.downloads) == 1
