"""`custom_metrics` from ADK's eval config: the same functions run through `adk eval` / ADK's AgentEvaluator and
through us give the same scores and verdicts, including a lower-is-better metric and an async one."""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from google.adk.evaluation.local_eval_set_results_manager import LocalEvalSetResultsManager

from adk_eval_gate import AgentEvaluator
from adk_eval_gate.commands.main import main
from tests.support.paths import ROOT

METRICS = '''
from google.adk.evaluation.evaluator import EvalStatus, EvaluationResult, PerInvocationResult


def _text(content):
    return " ".join(p.text for p in (content.parts or []) if p.text) if content else ""


def word_count(eval_metric, actual_invocations, expected_invocations, conversation_scenario):
    """Lower is better: a terse agent passes."""
    per = []
    for actual in actual_invocations:
        words = len(_text(actual.final_response).split())
        per.append(PerInvocationResult(actual_invocation=actual, score=float(words),
                                       eval_status=EvalStatus.PASSED if words <= 8 else EvalStatus.FAILED))
    overall = sum(r.score for r in per) / len(per)
    return EvaluationResult(overall_score=overall, per_invocation_results=per,
                            overall_eval_status=EvalStatus.PASSED if overall <= 8 else EvalStatus.FAILED)


async def handed_over(eval_metric, actual_invocations, expected_invocations, conversation_scenario):
    """Async; scores 1 when ADK's arguments arrive as ADK passes them."""
    ok = (eval_metric.threshold is None and eval_metric.criterion.threshold == 0.5
          and eval_metric.metric_name == "handed_over" and eval_metric.custom_function_path == "my_metrics.handed_over"
          and expected_invocations is not None and len(expected_invocations) == len(actual_invocations)
          and conversation_scenario is None and type(actual_invocations[0]).__module__ ==
          "google.adk.evaluation.eval_case")
    per = [PerInvocationResult(actual_invocation=a, score=1.0 if ok else 0.0,
                               eval_status=EvalStatus.PASSED if ok else EvalStatus.FAILED) for a in actual_invocations]
    return EvaluationResult(overall_score=1.0 if ok else 0.0, per_invocation_results=per,
                            overall_eval_status=EvalStatus.PASSED if ok else EvalStatus.FAILED)
'''

CONFIG = {
    "criteria": {"word_count": 8, "handed_over": {"threshold": 0.5}, "tool_trajectory_avg_score": 1.0},
    "custom_metrics": {
        "word_count": {"code_config": {"name": "my_metrics.word_count"}},
        "handed_over": {
            "code_config": {"name": "my_metrics.handed_over"},
            "description": "arguments as ADK passes them",
        },
    },
}


@pytest.fixture
def project(example, monkeypatch):
    (example / "my_metrics.py").write_text(METRICS)
    (example / "evals" / "eval_config.json").write_text(json.dumps(CONFIG))
    (example / "evals" / "test_config.json").write_text(json.dumps(CONFIG))
    monkeypatch.syspath_prepend(str(example))
    monkeypatch.chdir(example)
    config = example / "eval-gate.yml"  # ADK eval history, compared with adk eval's below
    config.write_text(config.read_text().replace("agent: hello_world}", "agent: hello_world, eval_history: true}"))
    return example


def _verdicts(result) -> dict[str, tuple]:
    return {
        c.eval_id: (
            c.final_eval_status.value,
            {
                m.metric_name: (m.score, m.eval_status.value)
                for m in c.overall_eval_metric_results
                if m.metric_name in ("word_count", "handed_over")
            },
        )
        for c in result.eval_case_results
    }


def test_scores_and_verdicts_equal_adk_evals(project, tmp_path):
    out = tmp_path / "r.json"
    main(["run", "--config", str(project / "eval-gate.yml"), "--output", str(out), "--quiet"])
    results = json.loads(out.read_text())
    cases = {c["eval_id"]: c for c in results["eval_sets"][0]["cases"]}
    assert cases["capabilities"]["metrics"]["word_count"]["status"] == "failed"  # "I can roll dice and check ..."
    assert cases["primes_paraphrased"]["metrics"]["word_count"]["status"] == "passed"  # "No prime numbers found."
    assert cases["dice_then_primes"]["metrics"]["word_count"]["score"] == 7.0  # turns of 9 and 5 words
    assert all(c["metrics"]["handed_over"]["score"] == 1.0 for c in cases.values())

    manager = LocalEvalSetResultsManager(agents_dir=str(project))
    [ours_id] = manager.list_eval_set_results("hello_world")
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(project), str(ROOT / "src")]),
    }
    done = subprocess.run(
        [
            str(Path(sys.executable).parent / "adk"),
            "eval",
            "hello_world",
            "evals/dice.evalset.json",
            "--config_file_path",
            "evals/eval_config.json",
        ],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )
    assert "Eval Run Summary" in done.stdout, done.stdout + done.stderr
    adk_id = next(i for i in manager.list_eval_set_results("hello_world") if i != ours_id)
    ours = _verdicts(manager.get_eval_set_result("hello_world", ours_id))
    adk = _verdicts(manager.get_eval_set_result("hello_world", adk_id))
    assert ours == adk

    def words(invocation):
        return len(" ".join(p.get("text", "") for p in invocation["final_response"]["parts"]).split())

    turns = {name: [words(i) for i in c["runs"][0]["actual_invocations"]] for name, c in cases.items()}
    assert {name: v[1]["word_count"][0] for name, v in ours.items()} == {n: sum(t) / len(t) for n, t in turns.items()}


def test_agent_evaluator_infers_lower_is_better_as_adk_2_13_does(project):
    from google.adk.evaluation.agent_evaluator import AgentEvaluator as AdkAgentEvaluator

    messages = {}
    for name, evaluator in (("adk", AdkAgentEvaluator), ("ours", AgentEvaluator)):
        with pytest.raises(AssertionError) as raised:
            asyncio.run(
                evaluator.evaluate("hello_world", "evals/dice.evalset.json", num_runs=2, print_detailed_results=False)
            )
        messages[name] = sorted(line for line in str(raised.value).splitlines() if " for hello_world " in line)
    assert messages["ours"] == messages["adk"]
    assert "word_count for hello_world Failed. Expected 8.0, but got 9.0." in messages["ours"]


def test_an_unimportable_function_is_not_evaluated_with_the_reason(project, tmp_path):
    config = dict(
        CONFIG,
        criteria={"word_count": 8},
        custom_metrics={"word_count": {"code_config": {"name": "nowhere.fn"}}},
    )
    (project / "evals" / "eval_config.json").write_text(json.dumps(config))
    out = tmp_path / "r.json"
    main(["run", "--config", str(project / "eval-gate.yml"), "--output", str(out), "--quiet"])
    metric = json.loads(out.read_text())["eval_sets"][0]["cases"][0]["metrics"]["word_count"]
    assert (
        metric["status"] == "not_evaluated"
        and "could not import custom metric function from nowhere.fn" in metric["reason"]
    )


FLAKY = '''
from google.adk.evaluation.evaluator import EvalStatus, EvaluationResult, PerInvocationResult

calls = []


def flaky(eval_metric, actual_invocations, expected_invocations, conversation_scenario):
    """Scores 1 on its first call; its backend is down after that."""
    calls.append(1)
    if len(calls) > 1:
        raise RuntimeError("metric backend down")
    passed = EvalStatus.PASSED
    per = [PerInvocationResult(actual_invocation=a, score=1.0, eval_status=passed) for a in actual_invocations]
    return EvaluationResult(overall_score=1.0, per_invocation_results=per, overall_eval_status=EvalStatus.PASSED)
'''


def test_agent_evaluator_fails_when_a_metric_broke_in_one_run_of_two(project, tmp_path):
    """One good run must not stand for the one whose metric raised: no score is no pass."""
    (project / "flaky_metrics.py").write_text(FLAKY)
    one = tmp_path / "one"
    one.mkdir()
    data = json.loads((project / "evals" / "dice.evalset.json").read_text())
    data["eval_cases"] = data["eval_cases"][:1]
    (one / "one.evalset.json").write_text(json.dumps(data))
    (one / "test_config.json").write_text(
        json.dumps(
            {"criteria": {"flaky": 0.5}, "custom_metrics": {"flaky": {"code_config": {"name": "flaky_metrics.flaky"}}}}
        )
    )
    with pytest.raises(AssertionError, match="flaky for hello_world could not be scored"):
        asyncio.run(
            AgentEvaluator.evaluate(
                "hello_world", str(one / "one.evalset.json"), num_runs=2, print_detailed_results=False
            )
        )


WHERE = '''
import json, os
from google.adk.evaluation.evaluator import EvalStatus, EvaluationResult, PerInvocationResult


def where(eval_metric, actual_invocations, expected_invocations, conversation_scenario):
    """Says where it ran and what it could see there."""
    with open(os.environ["WHERE_FILE"], "a") as out:
        out.write(json.dumps({"pid": os.getpid(), "token": os.environ.get("GITHUB_TOKEN")}) + "\\n")
    print("where: printed by the metric")
    passed = EvalStatus.PASSED
    per = [PerInvocationResult(actual_invocation=a, score=1.0, eval_status=passed) for a in actual_invocations]
    return EvaluationResult(overall_score=1.0, per_invocation_results=per, overall_eval_status=passed)
'''


def test_with_a_token_held_the_function_runs_in_a_process_of_its_own_with_the_same_scores(
    project, tmp_path, monkeypatch, capfd
):
    (project / "where_metrics.py").write_text(WHERE)
    # one run a case (no adaptive extra round), so the calls of each `run` below can be counted
    gate = project / "eval-gate.yml"
    gate.write_text(re.sub(r"(?m)^(\s*num_runs:).*$", r"\1 1", gate.read_text()))
    config = json.loads((project / "evals" / "eval_config.json").read_text())
    config["criteria"]["where"] = 0.5
    config["custom_metrics"]["where"] = {"code_config": {"name": "where_metrics.where"}}
    (project / "evals" / "eval_config.json").write_text(json.dumps(config))
    monkeypatch.setenv("WHERE_FILE", str(tmp_path / "where.jsonl"))

    def scores(out: Path) -> dict:
        main(["run", "--config", str(project / "eval-gate.yml"), "--output", str(out), "--quiet"])
        cases = json.loads(out.read_text())["eval_sets"][0]["cases"]
        return {
            (c["eval_id"], name): (m["score"], m["status"])
            for c in cases
            for name, m in c["metrics"].items()
            if name in ("word_count", "handed_over", "where")
        }

    here = scores(tmp_path / "here.json")
    monkeypatch.setenv("GITHUB_TOKEN", "ghs_heldTokenForTheMetricTest0123456789")
    elsewhere = scores(tmp_path / "elsewhere.json")
    assert elsewhere == here and len(here) == 18  # six cases, three metrics: the same scores and verdicts
    calls = [json.loads(line) for line in (tmp_path / "where.jsonl").read_text().splitlines()]
    assert len(calls) == 12 and {c["pid"] for c in calls[:6]} == {os.getpid()}  # no token: in process, as before
    (other,) = {c["pid"] for c in calls[6:]}  # held: one process of its own for the run's every call
    assert other != os.getpid() and {c["token"] for c in calls[6:]} == {None}
    assert "where: printed by the metric" in capfd.readouterr().err  # its output reaches the log
