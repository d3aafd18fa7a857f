"""ADK 2.13's efficiency metrics: our values equal google-adk's own evaluators on the same invocations, including
the None rules, and they reach the results file and the reports without deciding any verdict."""

from __future__ import annotations

import json
import statistics

import pytest
from google.adk.evaluation import _efficiency_evaluators as adk_efficiency
from google.adk.evaluation.eval_case import Invocation as AdkInvocation

from adk_eval_gate.commands.main import main
from adk_eval_gate.criteria import efficiency_metrics as efficiency
from adk_eval_gate.evalsets.adk_eval_schema import Invocation

ADK = {
    "tool_call_count_v1": adk_efficiency._ToolCallCountV1Evaluator,
    "inference_call_count_v1": adk_efficiency._InferenceCallCountV1Evaluator,
    "token_usage_v1": adk_efficiency._TokenUsageV1Evaluator,
    "invocation_duration_v1": adk_efficiency._InvocationDurationV1Evaluator,
}


def _user(text: str) -> dict:
    return {"parts": [{"text": text}], "role": "user"}


def _event(usage: dict | None = None, model_version: str | None = None, call: bool = False) -> dict:
    event = {
        "author": "agent",
        "content": {"parts": [{"function_call": {"name": "t", "args": {}}} if call else {"text": "x"}]},
    }
    if usage is not None:
        event["usage_metadata"] = usage
    if model_version is not None:
        event["model_version"] = model_version
    return event


# Every None rule ADK has: hand-written IntermediateData, events reporting only some token kinds, thinking and
# tool-use prompt tokens, a model version without usage, untimed turns.
HAND_MADE = [
    {"user_content": _user("a"), "intermediate_data": {"tool_uses": [{"name": "t", "args": {}}]}},
    {
        "user_content": _user("b"),
        "duration": 1.2345,
        "intermediate_data": {
            "invocation_events": [
                _event({"prompt_token_count": 10, "candidates_token_count": 5}, call=True),
                _event({"candidates_token_count": 7, "thoughts_token_count": 3}),
                _event(model_version="gemini-x"),
            ]
        },
    },
    {
        "user_content": _user("c"),
        "duration": 0.5,
        "intermediate_data": {
            "invocation_events": [
                _event({"prompt_token_count": 4, "tool_use_prompt_token_count": 6}),
                _event(call=True),
                _event(call=True),
            ]
        },
    },
    {"user_content": _user("d"), "intermediate_data": {"invocation_events": []}},
    {"user_content": _user("e"), "duration": 2.0},
]


def _adk(name: str, invocations: list[Invocation]):
    adk = [AdkInvocation.model_validate(i.model_dump(mode="json", exclude_none=True)) for i in invocations]
    return ADK[name]().evaluate_invocations(adk)


@pytest.mark.parametrize("name", efficiency.NAMES)
@pytest.mark.parametrize("subset", [slice(0, 5), slice(0, 1), slice(1, 3), slice(3, 5), slice(4, 5)])
def test_equal_to_adks_evaluators_on_hand_made_invocations(name, subset):
    invocations = [Invocation.model_validate(i) for i in HAND_MADE[subset]]
    ours = efficiency.run_value(name, invocations)
    adk = _adk(name, invocations)
    assert ours.per_invocation == [r.score for r in adk.per_invocation_results]
    assert ours.score == adk.overall_score


def test_equal_to_adk_on_a_real_run_and_pooled_over_runs_as_agent_evaluator_pools(example, tmp_path):
    config = example / "eval-gate.yml"
    config.write_text(config.read_text().replace("num_runs: {min: 2, max: 10}", "num_runs: 2"))
    out = tmp_path / "r.json"
    main(["run", "--config", str(config), "--output", str(out), "--quiet"])
    cases = json.loads(out.read_text())["eval_sets"][0]["cases"]
    for case in cases:
        runs = [[Invocation.model_validate(i) for i in r["actual_invocations"]] for r in case["runs"]]
        assert any(e.usage_metadata for i in runs[0] for e in i.intermediate_data.invocation_events)
        for name in efficiency.NAMES:
            adk_runs = [_adk(name, invocations) for invocations in runs]
            pooled = [r.score for a in adk_runs for r in a.per_invocation_results if r.score is not None]
            assert case["efficiency"][name]["score"] == statistics.mean(pooled)  # AgentEvaluator's number
            assert [efficiency.run_value(name, r).score for r in runs] == [a.overall_score for a in adk_runs]
    # Informational: the same verdicts as before these metrics existed.
    assert [c["status"] for c in cases] == ["passed", "passed", "passed", "passed", "failed", "failed"]
    assert all(set(c["metrics"]) == {"tool_trajectory_avg_score", "response_match_score"} for c in cases)


def test_reported_in_the_console_table_and_the_pr_comment(example, tmp_path, capsys):
    from adk_eval_gate.baseline.stores import LoadOutcome
    from adk_eval_gate.config.workflow_settings import GateSettings
    from adk_eval_gate.gate.comparison_file import build_comparison
    from adk_eval_gate.report.markdown import render_report
    from adk_eval_gate.results.build import read_results

    out = tmp_path / "r.json"
    main(["run", "--config", str(example / "eval-gate.yml"), "--output", str(out)])
    printed = capsys.readouterr().out
    results = read_results(out)
    calls = statistics.mean(c.efficiency["tool_call_count_v1"].score for c in results.eval_sets[0].cases)
    tokens = statistics.mean(c.efficiency["token_usage_v1"].score for c in results.eval_sets[0].cases)
    line = f"per turn: {calls:.1f} tool calls, "
    assert f"  efficiency (informational), {line}" in printed and f"{tokens:,.0f} tokens" in printed
    comparison = build_comparison(results, LoadOutcome(None, []), GateSettings(), [])
    assert line in render_report(comparison, results, {})
