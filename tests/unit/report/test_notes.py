"""report/notes.py: the gate's decision in words, applied to new rows of the comparison file."""

from __future__ import annotations

import copy

from adk_eval_gate.baseline.models import EfficiencyRow, Row, Summary
from adk_eval_gate.config.models import GateSettings
from adk_eval_gate.gate.decision import GatedComparison
from adk_eval_gate.gate.outcome import Comparison
from adk_eval_gate.gate.policy import decide
from adk_eval_gate.report.notes import comparison_file
from tests.support.report_data import TRAJECTORY, Case, results_file


def _row(eval_id: str, reason: str, **more) -> Row:
    return Row(
        agent="a", eval_set_id="s", eval_id=eval_id, criterion=TRAJECTORY, baseline=1.0, current=0.0, delta=-1.0,
        verdict="regressed", reason=reason, **more,
    )  # fmt: skip


def _efficiency(metric, verdict, change) -> EfficiencyRow:
    return EfficiencyRow(
        agent="a", eval_set_id="s", metric=metric, baseline=1.0, current=1.0 + change, change=change, tolerance=0.2,
        verdict=verdict, reason=f"{change:+.0%}",
    )  # fmt: skip


def _gated(compared: Comparison, gate: GateSettings) -> GatedComparison:
    results = results_file({("a", "s"): [Case("c1", {TRAJECTORY: [[1.0]]})]})
    return GatedComparison(None, (), compared, (), decide(compared, results, gate))


def test_the_file_flags_what_gates_and_says_why_the_rest_does_not():
    group = Summary(
        agent="a", eval_set_id="s", criterion=TRAJECTORY, baseline=1.0, current=0.5, delta=-0.5, verdict="regressed",
        reason="dropped 0.500", cases_compared=3,
    )  # fmt: skip
    compared = Comparison(
        pooled=(),
        summaries=(group,),
        rows=(_row("c1", "dropped"), _row("c2", "flaky", quarantined=True)),
        efficiency=(_efficiency("tokens", "improved", -0.5), _efficiency("cost", "regressed", 1.0)),
    )
    before = copy.deepcopy(compared)
    written = comparison_file(_gated(compared, GateSettings(fail_on=["regression", "cost_regression"])))
    assert compared == before  # the file is made of new rows
    (summary,) = written.summaries
    assert summary.gating and summary.reason == "dropped 0.500"
    assert [(r.gating, r.reason) for r in written.rows] == [
        (False, "dropped; behind a failing eval-set or pooled verdict"),
        (False, "flaky; quarantined: known flaky on the default branch (gate.quarantine), reported, not gating"),
    ]
    # regressions first, the gating one before any other
    assert [(e.metric, e.gating) for e in written.efficiency] == [("cost", True), ("tokens", False)]
    # what changed for the user first, the test's sentence after
    assert written.gate.failures == [
        f"regression: a/s {TRAJECTORY}: 1 of 1 case scored lower (c1); dropped 0.500",
        "cost regression: a/s cost +100%",
    ]


def test_a_regression_the_policy_ignores_says_which_condition_is_missing():
    compared = Comparison(pooled=(), summaries=(), rows=(_row("c1", "dropped"),), efficiency=())
    written = comparison_file(_gated(compared, GateSettings(fail_on=["error"])))
    assert written.verdict == "pass"
    assert written.rows[0].reason == (
        "dropped; significant for this case alone, not gating (gate.fail_on lacks case_regression)"
    )
    assert written.gate.reason == "no failing condition (error) in 0 eval-set comparison(s)"
