"""AgentEvaluator's verdict in ADK's words (integrations/adk_failures.py), from results built here: a metric that
could not be scored and a run that errored are failures, never a quiet pass; the CSV keeps one header."""

from __future__ import annotations

import csv

import pytest

from adk_eval_gate.integrations.adk_failures import failures_for, raise_if_failed, write_csv
from adk_eval_gate.results.results_format import CaseResult, Counts, EvalSetResult, MetricResult, RunRecord


def eval_set(*cases: CaseResult) -> EvalSetResult:
    return EvalSetResult(
        agent="bot",
        eval_set_id="set",
        file="set.evalset.json",
        shape="evalset",
        criteria_source="default",
        criteria={},
        num_runs=2,
        target="adk",
        summary=Counts(total=len(cases), passed=0, failed=0, error=len(cases)),
        cases=list(cases),
    )


def test_a_metric_that_could_not_be_scored_and_errored_runs_are_failures():
    broken = MetricResult(score=None, threshold=0.8, status="error", per_invocation=[], runs=[], reason="judge gone")
    case = CaseResult(
        eval_id="c1",
        status="error",
        metrics={"response_match_score": broken},
        runs=[RunRecord(run=0, error="agent crashed"), RunRecord(run=1)],
    )
    failures = failures_for(eval_set(case), {}, "agents.bot")
    assert failures == [
        "response_match_score for agents.bot could not be scored: judge gone",
        "c1 for agents.bot Failed. 1 of 2 runs were recorded as failed without producing any metric results. "
        "First error: agent crashed",
    ]


def test_failures_raise_in_adks_words_and_none_raise_nothing():
    raise_if_failed([], print_detailed_results=False)
    with pytest.raises(AssertionError) as raised:
        raise_if_failed(["m for a Failed."], print_detailed_results=False)
    assert str(raised.value).startswith("Following are all the test failures. If you looking to get more details")
    assert str(raised.value).endswith("\nm for a Failed.")
    with pytest.raises(AssertionError, match=r"^Following are all the test failures.\nm$"):
        raise_if_failed(["m"], print_detailed_results=True)


def test_the_csv_is_appended_with_its_header_written_once(tmp_path):
    path = tmp_path / "out" / "turns.csv"
    write_csv([{"eval_id": "a", "score": 1.0}], str(path))
    write_csv([{"eval_id": "b", "score": 0.5}], str(path))
    write_csv([], str(path))
    assert list(csv.DictReader(path.open())) == [{"eval_id": "a", "score": "1.0"}, {"eval_id": "b", "score": "0.5"}]
