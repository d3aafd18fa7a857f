"""agents-cli code metrics scored as the SDK scores them: the same `instance` (the SDK's own CustomMetricHandler,
in process, is the oracle), the same result rules, run isolated in a child process; thresholds optional."""

from __future__ import annotations

import asyncio
import textwrap
from pathlib import Path

import pytest
import yaml
from agentplatform._genai import _evals_metric_handlers as sdk_handlers
from agentplatform._genai import types as sdk

from adk_eval_gate.criteria import agents_cli_code
from adk_eval_gate.criteria.agents_cli_code import run_code_metric
from adk_eval_gate.criteria.agents_cli_metrics import resolve_agents_cli_metrics
from adk_eval_gate.criteria.engine.criterion import Status
from adk_eval_gate.criteria.engine.scoring import score_case
from adk_eval_gate.evalsets.adk_eval_schema import Invocation, InvocationEvent, InvocationEvents
from adk_eval_gate.evalsets.agents_cli_config import parse_agents_cli_config
from adk_eval_gate.evalsets.agents_cli_traces import generated_case, metric_instance
from adk_eval_gate.evalsets.loader import parse_eval_set
from adk_eval_gate.targets.case_run import CaseRun

ANSWER = {"role": "model", "parts": [{"text": "Paris is the capital."}]}
CASES = [
    {
        "eval_case_id": "shape_a",
        "prompt": {"role": "user", "parts": [{"text": "Capital of France?"}]},
        "reference": {"response": {"role": "model", "parts": [{"text": "Paris"}]}},
        "context": "Geography",
        "expected_tool": "get_capital",
        "rubric_groups": {"g": {"rubrics": [{"rubric_id": "r", "content": {"property": {"description": "d"}}}]}},
    },
    {
        "eval_case_id": "shape_b",
        "agent_data": {
            "turns": [
                {
                    "turn_index": 0,
                    "events": [{"author": "user", "content": {"role": "user", "parts": [{"text": "Hi"}]}}],
                },
            ]
        },
        "user_scenario": {"starting_prompt": "Hi", "conversation_plan": "ask"},
    },
]


def _eval_set():
    return parse_eval_set({"eval_cases": CASES}, Path("basic-dataset.json")).eval_set


def _invocation(case) -> Invocation:
    call = {"role": "model", "parts": [{"function_call": {"name": "get_capital", "args": {"country": "France"}}}]}
    reply = {"role": "user", "parts": [{"function_response": {"name": "get_capital", "response": {"result": "Paris"}}}]}
    return Invocation(
        user_content=case.conversation[0].user_content,
        final_response=ANSWER,
        intermediate_data=InvocationEvents(
            invocation_events=[
                InvocationEvent(author="root_agent", content=call),
                InvocationEvent(author="root_agent", content=reply),
                InvocationEvent(author="root_agent", content=None),  # the final event, its content in final_response
            ]
        ),
    )


def _sdk_instance(generated: dict) -> dict:
    seen = []
    handler = sdk_handlers.CustomMetricHandler(
        module=None, metric=sdk.Metric(name="m", custom_function=lambda i: seen.append(i) or 1.0)
    )
    handler.get_metric_result(sdk.EvalCase.model_validate(generated), 0)
    return seen[0]


@pytest.mark.parametrize("index", [0, 1])
def test_instance_is_the_sdks(index):
    case = _eval_set().eval_cases[index]
    generated = generated_case(case, [_invocation(case)])
    assert metric_instance(generated) == _sdk_instance(generated)
    events = generated["agent_data"]["turns"][-1]["events"]
    assert [e["content"]["parts"][0].keys() for e in events[-3:]] == [
        {"function_call"},
        {"function_response"},
        {"text"},
    ]
    assert generated["responses"] == [{"response": ANSWER}]


def test_a_case_without_a_text_response_is_the_sdks_error():
    case = _eval_set().eval_cases[0]
    silent = _invocation(case).model_copy(update={"final_response": None})
    generated = generated_case(case, [silent])
    assert "responses" not in generated
    assert metric_instance(generated) == "No response found for candidate 0 in EvalCase shape_a."


RULES = [
    "return {'score': 0.25, 'explanation': 'why'}",
    "return 3",
    "return 0.5",
    "return True",
    "return {'score': '0.75'}",
    "return 'great'",
    "return None",
    "return {'explanation': 'no score'}",
    "return [1]",
    "raise ValueError('boom')",
]


@pytest.mark.parametrize("body", RULES)
def test_result_rules_are_the_sdks(tmp_path, body):
    source = f"def evaluate(instance):\n    {body}\n"
    namespace: dict = {}
    exec(source, namespace)
    instance = {"eval_case_id": "a", "response": ANSWER}
    case = sdk.EvalCase(eval_case_id="a", responses=[sdk.ResponseCandidate(response=ANSWER)])
    theirs = sdk_handlers.CustomMetricHandler(
        module=None, metric=sdk.Metric(name="m", custom_function=namespace["evaluate"])
    ).get_metric_result(case, 0)
    ours = asyncio.run(run_code_metric("m", source, instance, tmp_path))
    assert ours.score == theirs.score
    assert (ours.error is None) == (theirs.error_message is None)
    if theirs.error_message is not None and "boom" in theirs.error_message:
        assert ours.error == "CustomFunctionError(evaluate): boom" == theirs.error_message
    if theirs.explanation is not None:
        assert ours.explanation == theirs.explanation


def test_non_finite_scores_are_errors_not_numbers(tmp_path):
    result = asyncio.run(run_code_metric("m", "def evaluate(i):\n    return float('nan')\n", {}, tmp_path))
    assert result.score is None and "not a finite number" in result.error


def test_each_run_has_its_own_metric_slots_and_none_outlive_it(tmp_path):
    """The slots belong to a run's event loop: a later run (a new loop, maybe at the old one's address) gets fresh
    ones, never a semaphore bound to a closed loop, and nothing is kept once a run's loop is gone."""
    import gc

    gc.collect()
    before = len(agents_cli_code._slots)  # loops other tests of this process still hold

    async def one_run() -> None:
        result = await run_code_metric("m", "def evaluate(i):\n    return 1\n", {}, tmp_path)
        assert result.score == 1.0 and len(agents_cli_code._slots) == before + 1  # this run's loop only

    asyncio.run(one_run())
    gc.collect()  # a closed loop sits in reference cycles until the collector runs
    asyncio.run(one_run())
    gc.collect()
    assert len(agents_cli_code._slots) == before


def test_metric_code_runs_isolated_without_tokens(tmp_path, monkeypatch):
    monkeypatch.setenv("GITHUB_TOKEN", "ghs_secret")
    monkeypatch.setenv("PYTHONPATH", "/nowhere")
    source = textwrap.dedent(
        """\
        import os, sys
        def evaluate(instance):
            assert "GITHUB_TOKEN" not in os.environ, "token leaked"
            assert "/nowhere" not in sys.path, "PYTHONPATH honoured"
            print("noise on stdout")
            return {"score": 1, "explanation": os.getcwd()}
        """
    )
    result = asyncio.run(run_code_metric("m", source, {}, tmp_path))
    assert result.error is None and result.score == 1.0 and result.explanation == str(tmp_path)


def test_a_crash_or_a_hang_is_an_error_for_that_case(tmp_path, monkeypatch):
    crash = asyncio.run(run_code_metric("m", "import os\ndef evaluate(i):\n    os._exit(3)\n", {}, tmp_path))
    assert crash.score is None and "exited with status 3" in crash.error
    monkeypatch.setattr(agents_cli_code, "TIMEOUT_SECONDS", 0.5)
    hang = asyncio.run(run_code_metric("m", "import time\ndef evaluate(i):\n    time.sleep(30)\n", {}, tmp_path))
    assert hang.score is None and "did not finish within 0.5 s" in hang.error


CONFIG = """\
metrics_to_run: [word_count, exact, rouge_2]
custom_metrics:
  - name: rouge_2
  - name: word_count
    custom_function: |
      def evaluate(instance):
          return len(instance["response"]["parts"][0]["text"].split())
  - name: exact
    custom_function: |
      def evaluate(instance):
          return float(instance["response"]["parts"][0]["text"] == "Paris")
"""


def _score(tmp_path, thresholds):
    from adk_eval_gate.criteria.engine.judging import JudgeJob, judge_all

    config = parse_agents_cli_config(yaml.safe_load(CONFIG), tmp_path / "eval_config.yaml")
    criteria = resolve_agents_cli_metrics(config, thresholds, "eval-gate.yml", ("agents", 0, "thresholds"), None)
    case = _eval_set().eval_cases[0]
    runs = [CaseRun("basic-dataset", case.eval_id, r, (_invocation(case),)) for r in range(2)]
    jobs = [JudgeJob(("a", "basic-dataset", case.eval_id), case, run, c) for run in runs for c in criteria]
    judged = asyncio.run(judge_all(jobs, None))[("a", "basic-dataset", case.eval_id)]
    return {r.name: r for r in score_case(case, runs, criteria, judged).criteria}


def test_without_thresholds_scores_pass_and_service_metrics_error(tmp_path):
    results = _score(tmp_path, None)
    assert results["word_count"].score == 4.0 and results["word_count"].status is Status.PASSED
    assert results["exact"].score == 0.0 and results["exact"].status is Status.PASSED
    computed = results["rouge_2"]
    assert computed.status is Status.ERROR and "other than exact_match, bleu, rouge_1, rouge_l_sum" in computed.reason
    assert "not evaluated" in computed.reason


def test_thresholds_make_pass_and_fail(tmp_path):
    results = _score(tmp_path, {"word_count": 5, "exact": 0.0})
    assert results["word_count"].status is Status.FAILED and results["exact"].status is Status.PASSED
