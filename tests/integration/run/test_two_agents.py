"""Two agents whose eval sets share ids, run together: each agent's results are its own runs' (issue #30: the run
joins runs to agents by the name their jobs carry), in worker pools, in this process, and with judges."""

from __future__ import annotations

import json

import pytest

from adk_eval_gate.run.pipeline import run_plan
from adk_eval_gate.run.plan import build_plan
from tests.integration.targets.test_target_adk import faulty_suite


@pytest.mark.parametrize("workers", [1, 2])  # 1: every job in this process; 2: the agent host's worker pools
def test_each_agent_gets_its_own_runs_when_eval_set_and_case_ids_are_the_same(tmp_path, workers):
    prompts = {f"c{i}": f"say {i}" for i in range(4)}
    config = faulty_suite(tmp_path, prompts, run=f"run: {{workers: {workers}}}\n")
    # the twin's eval set: the same eval_set_id and case ids, expecting answers the agent never gives
    twin = json.loads((tmp_path / "s.evalset.json").read_text())
    for case in twin["eval_cases"]:
        case["conversation"][0]["final_response"]["parts"][0]["text"] = "something else entirely"
    (tmp_path / "twin.evalset.json").write_text(json.dumps(twin))
    text = config.read_text()
    agent = text[text.index("  - name: faulty") :]
    twin_agent = agent.replace("name: faulty", "name: twin").replace("s.evalset.json", "twin.evalset.json")
    config.write_text(text + twin_agent.replace("criteria: {", "num_runs: 2\n    criteria: {"))
    results = run_plan(build_plan(config), quiet=True)
    by_agent = {s.agent: s for s in results.eval_sets}
    assert [s.eval_set_id for s in results.eval_sets] == ["s", "s"]
    assert by_agent["faulty"].summary.passed == 4 and by_agent["faulty"].summary.failed == 0
    assert by_agent["twin"].summary.failed == 4 and by_agent["twin"].summary.passed == 0
    assert all(len(c.runs) == 1 for c in by_agent["faulty"].cases)
    assert all(len(c.runs) == 2 for c in by_agent["twin"].cases)  # its two runs, none of the other agent's
    assert set(results.agent_usage) == {"faulty", "twin"}
