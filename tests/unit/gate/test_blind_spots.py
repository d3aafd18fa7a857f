"""A gate whose settings cannot fail says so (gate/blind_spots.py): a pull request's `fail_on: []` is never silent."""

from __future__ import annotations

from adk_eval_gate.config.workflow_settings import GateSettings
from adk_eval_gate.gate.blind_spots import blind_spots


def test_the_defaults_have_no_blind_spot():
    assert blind_spots(GateSettings()) == ()


def test_an_empty_fail_on_cannot_fail_and_says_so():
    (said,) = blind_spots(GateSettings(fail_on=[]))
    assert "cannot fail" in said


def test_each_missing_condition_is_named():
    said = blind_spots(GateSettings(fail_on=["drift"]))
    assert any("no `regression`" in s for s in said) and any("no `error`" in s for s in said)
    assert blind_spots(GateSettings(fail_on=["threshold", "error"])) == ()


def test_a_tolerance_no_score_can_exceed_is_named():
    assert any("tolerance" in s for s in blind_spots(GateSettings(tolerance=1.0)))
    assert any("tolerance" in s for s in blind_spots(GateSettings(tolerance={"response_match_score": 1.0})))
    assert blind_spots(GateSettings(tolerance=0.2)) == ()
