"""ADK's aggregation rules: case status, pooling across runs, invocation-count mismatches, unavailable criteria."""

from __future__ import annotations

import statistics

from google.genai import types as genai_types

from adk_eval_gate.criteria.engine.criterion import Cause, InvocationScore, MetricOutcome, Status
from adk_eval_gate.criteria.engine.scoring import CriterionResult, case_status, score_case
from adk_eval_gate.criteria.registry import resolve_criteria
from adk_eval_gate.evalsets.adk_eval_schema import EvalCase, IntermediateData, Invocation
from adk_eval_gate.targets.case_run import CaseRun


def inv(text: str, *tools: str) -> Invocation:
    return Invocation(
        user_content=genai_types.Content(role="user", parts=[genai_types.Part(text="q")]),
        final_response=genai_types.Content(role="model", parts=[genai_types.Part(text=text)]),
        intermediate_data=IntermediateData(tool_uses=[genai_types.FunctionCall(name=t, args={}) for t in tools]),
    )


def run(i: int, *invocations: Invocation, error: str | None = None) -> CaseRun:
    return CaseRun("s", "c", i, None if error else tuple(invocations), error)


def result(status: Status) -> CriterionResult:
    return CriterionResult("m", 0.5, None, status, [])


def test_case_status_follows_adk_eval():
    p, f, n = (result(Status.PASSED), result(Status.FAILED), result(Status.NOT_EVALUATED))
    assert case_status([p, n]) is Status.PASSED  # a not-evaluated metric never fails a case
    assert case_status([n, f, p]) is Status.FAILED
    assert case_status([n, n]) is Status.NOT_EVALUATED
    assert case_status([]) is Status.NOT_EVALUATED


def test_pooled_mean_over_all_invocations_of_all_runs():
    """ADK's own example: runs scoring [0] and [1, 1, 1] pool to 0.75, not the mean of run means (0.5)."""
    case = EvalCase(eval_id="c", conversation=[inv("a", "t")])
    criteria = resolve_criteria({"tool_trajectory_avg_score": 0.7}, None)
    three_turns = EvalCase(eval_id="c", conversation=[inv("a", "t")] * 3)
    runs = [run(0, inv("a", "t"), inv("a", "x"), inv("a", "x")), run(1, inv("a", "t"), inv("a", "t"), inv("a", "t"))]
    scored = score_case(three_turns, runs, criteria)
    metric = scored.criteria[0]
    assert [o.score for o in metric.runs] == [1 / 3, 1.0]
    assert metric.score == statistics.mean([1.0, 0.0, 0.0, 1.0, 1.0, 1.0]) == 4 / 6
    assert metric.status is Status.FAILED
    assert metric.pooled_per_invocation() == [1.0, 0.5, 0.5]
    single = score_case(case, [run(0, inv("a", "t"))], criteria)
    assert single.criteria[0].score == 1.0 and single.status is Status.PASSED


def test_length_mismatch_is_not_evaluated_with_reason():
    case = EvalCase(eval_id="c", conversation=[inv("a"), inv("b")])
    scored = score_case(case, [run(0, inv("a"))], resolve_criteria({"response_match_score": 0.5}, None))
    assert scored.status is Status.NOT_EVALUATED
    assert "produced 1 invocation(s) but the case expects 2" in scored.criteria[0].reason


def test_errored_run_makes_case_error_but_other_runs_still_scored():
    case = EvalCase(eval_id="c", conversation=[inv("hello there")])
    criteria = resolve_criteria({"response_match_score": 0.5}, None)
    scored = score_case(case, [run(0, inv("hello there")), run(1, error="agent raised ValueError: boom")], criteria)
    assert scored.status is Status.ERROR
    assert scored.reason == "1 of 2 runs errored: agent raised ValueError: boom"
    assert scored.criteria[0].score == 1.0 and scored.criteria[0].runs[1] is None


def test_judge_criteria_not_yet_available_are_not_evaluated_and_do_not_fail():
    case = EvalCase(eval_id="c", conversation=[inv("hello", "t")])
    criteria = resolve_criteria({"tool_trajectory_avg_score": 1.0, "no_code": 0.5}, None, custom_metrics=["no_code"])
    scored = score_case(case, [run(0, inv("hello", "t"))], criteria)
    assert scored.status is Status.PASSED
    judge = scored.criteria[1]
    assert judge.status is Status.NOT_EVALUATED and "code_config names no function" in judge.reason
    assert judge.cause is Cause.UNSUPPORTED


def test_a_criterion_that_errored_in_one_run_errors_the_case_and_keeps_no_score():
    case = EvalCase(eval_id="c", conversation=[inv("hello", "t")])
    criteria = resolve_criteria({"tool_trajectory_avg_score": 1.0, "final_response_match_v2": 0.5}, None)
    judged = {
        (0, "final_response_match_v2"): MetricOutcome(1.0, Status.PASSED, [InvocationScore(1.0, Status.PASSED)]),
        (1, "final_response_match_v2"): MetricOutcome.error(
            "judge unavailable after 5 attempts: HTTP 503", Cause.JUDGE_UNAVAILABLE, 1
        ),
    }
    scored = score_case(case, [run(0, inv("hello", "t")), run(1, inv("hello", "t"))], criteria, judged)
    trajectory, judge = scored.criteria
    assert trajectory.status is Status.PASSED and trajectory.score == 1.0  # the other criteria are still scored
    assert (judge.status, judge.score, judge.cause) == (Status.ERROR, None, Cause.JUDGE_UNAVAILABLE)
    assert judge.runs[0].score == 1.0 and judge.pooled_per_invocation() == [
        None
    ]  # run 1's evidence kept, no case score
    assert judge.runs[1].per_invocation == [
        InvocationScore(None, Status.ERROR, "judge unavailable after 5 attempts: HTTP 503")
    ]
    assert scored.status is Status.ERROR
    assert scored.reason == "final_response_match_v2: run 2 of 2: judge unavailable after 5 attempts: HTTP 503"


def test_a_designed_absence_does_not_error_the_case():
    case = EvalCase(eval_id="c", conversation=[inv("hello", "t")])
    criteria = resolve_criteria({"tool_trajectory_avg_score": 1.0, "final_response_match_v2": 0.5}, None)
    judged = {
        (0, "final_response_match_v2"): MetricOutcome.not_evaluated("no judge credentials", 1, Cause.NO_CREDENTIALS)
    }
    scored = score_case(case, [run(0, inv("hello", "t"))], criteria, judged)
    assert scored.status is Status.PASSED and scored.criteria[1].cause is Cause.NO_CREDENTIALS


def test_scenario_case_makes_reference_metrics_not_evaluated():
    case = EvalCase.model_validate(
        {"eval_id": "c", "conversation_scenario": {"starting_prompt": "a", "conversation_plan": "b"}}
    )
    scored = score_case(case, [run(0, inv("x"))], resolve_criteria({"response_match_score": 0.5}, None))
    assert scored.status is Status.NOT_EVALUATED
    assert "conversation_scenario" in scored.criteria[0].reason


def test_threshold_boundary_is_inclusive():
    case = EvalCase(eval_id="c", conversation=[inv("a", "t"), inv("a", "t")])
    criteria = resolve_criteria({"tool_trajectory_avg_score": 0.5}, None)
    scored = score_case(case, [run(0, inv("a", "t"), inv("a", "u"))], criteria)
    assert scored.criteria[0].score == 0.5 and scored.status is Status.PASSED


def test_match_type_spellings_accepted_like_adk():
    for spelling, expected in [
        ("in order", "IN_ORDER"),
        ("IN-ORDER", "IN_ORDER"),
        (2, "ANY_ORDER"),
        ("exact", "EXACT"),
    ]:
        (criterion,) = resolve_criteria(
            {"tool_trajectory_avg_score": {"threshold": 1, "matchType": spelling, "ignoreArgs": True}}, None
        )
        assert criterion.options.match_type.value == expected and criterion.options.ignore_args is True
