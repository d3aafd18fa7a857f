"""The `adk` target writes ADK eval history, read back here by google-adk's own LocalEvalSetResultsManager and
compared with what `adk eval` itself writes for the same agent and eval set."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from google.adk.evaluation.evaluator import EvalStatus
from google.adk.evaluation.local_eval_set_results_manager import LocalEvalSetResultsManager

from adk_eval_gate import AgentEvaluator
from adk_eval_gate.commands.main import main
from tests.conftest import FAULTY_AGENT

EFFICIENCY = {"tool_call_count_v1", "inference_call_count_v1", "token_usage_v1", "invocation_duration_v1"}


def _history(agents_dir: Path, app: str) -> list:
    manager = LocalEvalSetResultsManager(agents_dir=str(agents_dir))
    return [manager.get_eval_set_result(app, name) for name in sorted(manager.list_eval_set_results(app))]


def _by_case(result) -> dict[str, tuple]:
    return {
        c.eval_id: (
            c.final_eval_status,
            {
                m.metric_name: (m.score, m.eval_status, m.threshold)
                for m in c.overall_eval_metric_results
                if m.metric_name not in EFFICIENCY
            },
            [
                [
                    (m.metric_name, m.score, m.eval_status)
                    for m in i.eval_metric_results
                    if m.metric_name not in EFFICIENCY
                ]
                for i in c.eval_metric_result_per_invocation
            ],
        )
        for c in result.eval_case_results
    }


def test_adk_reads_our_run_as_it_reads_adk_evals_own(example, tmp_path):
    config = example / "eval-gate.yml"
    config.write_text(config.read_text().replace("agent: hello_world}", "agent: hello_world, eval_history: true}"))
    assert (
        main(
            [
                "run",
                "--config",
                str(example / "eval-gate.yml"),
                "--output",
                str(tmp_path / "r.json"),
                "--quiet",
            ]
        )
        == 1
    )
    [ours] = _history(example, "hello_world")
    assert ours.eval_set_result_name.startswith("hello_world_dice_") and ours.eval_set_id == "dice"
    files = list((example / "hello_world" / ".adk" / "eval_history").glob("*.evalset_result.json"))
    assert [f.name for f in files] == [ours.eval_set_result_name + ".evalset_result.json"]
    # The same statuses and scores as our results file.
    results = json.loads((tmp_path / "r.json").read_text())
    expected = {
        c["eval_id"]: (c["status"], {n: m["score"] for n, m in c["metrics"].items()})
        for c in results["eval_sets"][0]["cases"]
    }
    status = {EvalStatus.PASSED: "passed", EvalStatus.FAILED: "failed"}
    assert {k: (status[v[0]], {n: s for n, (s, _, _) in v[1].items()}) for k, v in _by_case(ours).items()} == expected

    # `adk eval` on the same agent folder and files writes its own history beside ours: the same verdicts.
    env = {**os.environ, "PYTHONPATH": str(Path.cwd() / "src")}
    done = subprocess.run(
        [
            str(Path(sys.executable).parent / "adk"),
            "eval",
            "hello_world",
            "evals/dice.evalset.json",
            "--config_file_path",
            "evals/eval_config.json",
        ],
        cwd=example,
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )
    assert "Tests failed: 2" in done.stdout, done.stdout + done.stderr
    adk = next(r for r in _history(example, "hello_world") if r.eval_set_result_name != ours.eval_set_result_name)
    assert _by_case(ours) == _by_case(adk)
    # Field for field the same schema: what adk web reads from one it finds in the other.
    ours_json = json.loads(next(f for f in files).read_text())
    adk_json = json.loads(
        (
            example / "hello_world" / ".adk" / "eval_history" / f"{adk.eval_set_result_name}.evalset_result.json"
        ).read_text()
    )
    assert set(ours_json) == set(adk_json)
    assert set(ours_json["eval_case_results"][0]) == set(adk_json["eval_case_results"][0])


def test_every_run_is_an_entry_a_crashed_run_is_failed_and_the_switch_turns_it_off(tmp_path):
    (tmp_path / "cases.evalset.json").write_text(
        json.dumps(
            {
                "eval_set_id": "cases",
                "eval_cases": [
                    {
                        "eval_id": "crash",
                        "conversation": [{"user_content": {"parts": [{"text": "please crash"}]}}],
                    },
                    {
                        "eval_id": "echo",
                        "conversation": [
                            {
                                "user_content": {"parts": [{"text": "hello"}]},
                                "final_response": {"parts": [{"text": "echo: hello"}]},
                            }
                        ],
                    },
                ],
            }
        )
    )
    agent = tmp_path / "faulty"
    import shutil

    shutil.copytree(FAULTY_AGENT, agent, ignore=shutil.ignore_patterns("__pycache__", ".adk"))
    config = tmp_path / "eval-gate.yml"
    config.write_text(
        "agents:\n  - name: faulty\n    target: {kind: adk, agent: faulty, eval_history: true}\n"
        "    evalsets: [cases.evalset.json]\n    num_runs: 2\n"
    )
    main(["run", "--config", str(config), "--output", str(tmp_path / "r.json"), "--quiet"])
    [result] = _history(tmp_path, "faulty")
    entries = [(c.eval_id, c.final_eval_status, len(c.overall_eval_metric_results)) for c in result.eval_case_results]
    assert sorted(entries) == [
        ("crash", EvalStatus.FAILED, 0),
        ("crash", EvalStatus.FAILED, 0),
        ("echo", EvalStatus.PASSED, 2),
        ("echo", EvalStatus.PASSED, 2),
    ]

    shutil.rmtree(agent / ".adk")
    config.write_text(config.read_text().replace("eval_history: true}", "eval_history: false}"))
    main(["run", "--config", str(config), "--output", str(tmp_path / "r.json"), "--quiet"])
    assert not (agent / ".adk").exists()
    # Off unless asked: a run writes nothing into the agent's folder by default.
    config.write_text(config.read_text().replace(", eval_history: false}", "}"))
    main(["run", "--config", str(config), "--output", str(tmp_path / "r.json"), "--quiet"])
    assert not (agent / ".adk").exists()


def test_agent_evaluator_keeps_history_through_the_callers_results_manager(example, monkeypatch, tmp_path):
    from google.adk.evaluation.agent_evaluator import AgentEvaluator as AdkAgentEvaluator

    monkeypatch.chdir(example)
    monkeypatch.syspath_prepend(str(example))
    (example / "evals" / "test_config.json").write_text((example / "evals" / "eval_config.json").read_text())
    store = tmp_path / "history"
    for evaluator in (AgentEvaluator, AdkAgentEvaluator):
        manager = LocalEvalSetResultsManager(agents_dir=str(store))
        with pytest.raises(AssertionError):  # two cases of this set fail
            asyncio.run(
                evaluator.evaluate(
                    "hello_world",
                    "evals/dice.evalset.json",
                    num_runs=2,
                    print_detailed_results=False,
                    app_name="my_app",
                    eval_set_results_manager=manager,
                )
            )
    ours, adk = _history(store, "my_app")  # ours came first; names end in the time they were written
    assert len(ours.eval_case_results) == len(adk.eval_case_results) == 12

    def verdicts(result):
        return sorted((c.eval_id, c.final_eval_status) for c in result.eval_case_results)

    assert verdicts(ours) == verdicts(adk)
