"""A case that scored lower on a trajectory criterion says where its tool calls first departed from the expected
ones, read from the current run's failing turn (criteria/tool_divergence.py wrote it there): first in the verdict
line, then in the case's row, masked and clipped."""

from __future__ import annotations

from adk_eval_gate.baseline.stores import LoadOutcome
from adk_eval_gate.baseline.stores.stored_baseline import LoadedBaseline, identity_of
from adk_eval_gate.config.workflow_settings import GateSettings
from adk_eval_gate.gate.comparison_file import build_comparison
from adk_eval_gate.gate.plain import first_divergence
from tests.support.report_data import RESPONSE, TRAJECTORY, Case, results_file

MISSING = "expected check_prime(nums=[6]), got no call"


def _compare(broken: list[Case]):
    fine = [Case(f"ok{i}", {TRAJECTORY: [[1.0, 1.0]] * 6}) for i in range(6)]
    base = results_file({("a", "s"): [*fine, *(Case(c.eval_id, {TRAJECTORY: [[1.0, 1.0]] * 6}) for c in broken)]})
    current = results_file({("a", "s"): [*fine, *broken]})
    outcome = LoadOutcome(LoadedBaseline(base, identity_of(base, "baseline.json")))
    return build_comparison(current, outcome, GateSettings(fail_on=["regression"]))


def test_the_verdict_line_and_the_case_row_name_the_first_diverging_call_of_a_later_turn():
    broken = [Case(f"c{i}", {TRAJECTORY: [[1.0, 0.0]] * 6}, details=MISSING) for i in range(3)]
    comparison = _compare(broken)
    assert comparison.verdict == "fail"
    # the passing first turn carries the same detail here, but only a turn that did not match is read
    said = f"c0: first diverging call: turn 2: {MISSING}; "
    assert comparison.gate.failures[0].text.startswith(
        f"regression: a/s {TRAJECTORY}: 3 of 9 cases scored lower (c0, c1, c2); {said}"
    ), comparison.gate.failures[0].text
    row = next(r for r in comparison.rows if r.eval_id == "c1")
    assert row.reason is not None and row.reason.startswith(f"first diverging call: turn 2: {MISSING}; dropped")
    assert all(r.reason is not None and "diverging" not in r.reason for r in comparison.rows if r.delta == 0)


def test_only_a_trajectory_criterion_s_turns_are_read_as_a_departure():
    case = results_file({("a", "s"): [Case("c", {TRAJECTORY: [[0.0]], RESPONSE: [[0.0]]}, details=MISSING)]})
    (result,) = case.eval_sets[0].cases
    assert first_divergence(result, TRAJECTORY) == f"first diverging call: {MISSING}"
    assert first_divergence(result, RESPONSE) is None  # a judge's words are not a tool call
    assert first_divergence(result, "no_such_metric") is None
    passed = results_file({("a", "s"): [Case("c", {TRAJECTORY: [[1.0]]}, details=MISSING)]}).eval_sets[0].cases[0]
    assert first_divergence(passed, TRAJECTORY) is None


def test_a_long_departure_is_clipped_at_a_word_and_a_secret_in_it_masked(monkeypatch):
    secret = "sk-live-1234567890abcdefghij"
    monkeypatch.setenv("SERVICE_API_KEY", secret)
    detail = f"expected search(query={secret}), got " + "search(query=words and more words) " * 8
    (result,) = results_file({("a", "s"): [Case("c", {TRAJECTORY: [[0.0]]}, details=detail)]}).eval_sets[0].cases
    said = first_divergence(result, TRAJECTORY)
    assert said is not None and secret not in said and "***" in said
    assert len(said) <= 120 and said.endswith("…") and not said.removesuffix("…").endswith("wor")
