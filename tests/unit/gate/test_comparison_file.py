"""gate/comparison_file.py: the gate's decision in words, applied to new rows of the comparison file."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import jsonschema
import pytest
from pydantic import ValidationError

from adk_eval_gate.baseline.comparison_format import Comparison, EfficiencyRow, Row, Summary
from adk_eval_gate.commands.goldens_update import regressed_cases
from adk_eval_gate.commands.schema import SHIPPED
from adk_eval_gate.config.workflow_settings import GateSettings
from adk_eval_gate.core.schema_versions import COMPARISON_SCHEMA_VERSION
from adk_eval_gate.gate.comparison_file import comparison_file
from adk_eval_gate.gate.decision import GatedComparison
from adk_eval_gate.gate.outcome import ComparedVerdicts, subject_of
from adk_eval_gate.gate.policy import decide
from adk_eval_gate.report.console import render_comparison
from adk_eval_gate.report.outputs import verdict_lines
from tests.support.report_data import TRAJECTORY, Case, results_file

V1 = Path(__file__).parents[2] / "support" / "comparison_v1" / "comparison.json"


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


def _gated(compared: ComparedVerdicts, gate: GateSettings) -> GatedComparison:
    results = results_file({("a", "s"): [Case("c1", {TRAJECTORY: [[1.0]]})]})
    return GatedComparison(None, (), compared, (), decide(compared, results, gate))


def test_the_file_flags_what_gates_and_says_why_the_rest_does_not():
    group = Summary(
        agent="a", eval_set_id="s", criterion=TRAJECTORY, baseline=1.0, current=0.5, delta=-0.5, verdict="regressed",
        reason="dropped 0.500", cases_compared=3,
    )  # fmt: skip
    compared = ComparedVerdicts(
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
    assert [f.text for f in written.gate.failures] == [
        f"regression: a/s {TRAJECTORY}: 1 of 1 case scored lower (c1); dropped 0.500",
        "cost regression: a/s cost +100%",
    ]
    # beside each sentence, the data it was made from: nobody reads the kind out of the sentence
    regression, cost = written.gate.failures
    assert (regression.kind, regression.subject) == ("regression", subject_of(group))
    assert (cost.kind, cost.figures.condition, cost.subject.criterion) == ("efficiency", "cost_regression", "cost")
    # and the notes on the regressions that do not gate, as data beside the clause their reasons end with
    assert [(n.kind, n.subject.eval_id, n.text) for n in written.gate.notes] == [
        ("behind_failing_group", "c1", "behind a failing eval-set or pooled verdict"),
        ("quarantined", "c2", "quarantined: known flaky on the default branch (gate.quarantine), reported, not gating"),
    ]


def test_a_regression_the_policy_ignores_says_which_condition_is_missing():
    compared = ComparedVerdicts(pooled=(), summaries=(), rows=(_row("c1", "dropped"),), efficiency=())
    written = comparison_file(_gated(compared, GateSettings(fail_on=["error"])))
    assert written.verdict == "pass"
    assert written.rows[0].reason == (
        "dropped; significant for this case alone, not gating (gate.fail_on lacks case_regression)"
    )
    assert written.gate.reason == "no failing condition (error) in 0 eval-set comparison(s)"


def test_the_file_round_trips_its_decision_as_data_and_names_its_version():
    compared = ComparedVerdicts(pooled=(), summaries=(), rows=(_row("c1", "dropped"),), efficiency=())
    results = results_file({("a", "s"): [Case("c1", {TRAJECTORY: [[0.0]]}), Case("c2", {TRAJECTORY: [[1.0]]})]})
    gate = GateSettings(fail_on=["case_regression"], min_pass_rate=0.9)
    written = comparison_file(GatedComparison(None, (), compared, (), decide(compared, results, gate)))
    data = json.loads(written.model_dump_json())
    assert data["schema_version"] == COMPARISON_SCHEMA_VERSION == 2
    assert [f["kind"] for f in data["gate"]["failures"]] == ["case_regression", "pass_rate"]
    assert data["gate"]["failures"][1]["figures"] == {"detail": None, "condition": None, "rate": 0.5, "minimum": 0.9}
    assert data["gate"]["failures"][1]["text"] == "pass rate 50.0% is below the minimum 90%"
    jsonschema.validate(data, json.loads(SHIPPED["comparison"].read_text()))
    assert Comparison.model_validate(data) == written


def test_a_version_1_file_is_read_its_sentences_kept_and_its_kinds_unrecorded():
    """A comparison.json written before failures were data (schema_version 1): still read by view, publish and
    goldens --regressed; its lines are kept word for word and nothing guesses their kind from the words."""
    data = json.loads(V1.read_text())
    assert data["schema_version"] == 1 and all(isinstance(f, str) for f in data["gate"]["failures"])
    old = Comparison.model_validate(data)
    assert [f.text for f in old.gate.failures] == data["gate"]["failures"]
    assert {f.kind for f in old.gate.failures} == {"unrecorded"} and old.gate.notes == []
    assert regressed_cases(V1) == {("hello_world", "dice", "roll_6"), ("hello_world", "dice", "dice_then_primes")}
    assert render_comparison(old).count("  also: ") == len(data["gate"]["failures"]) - 1
    # the job log counts what it cannot name as failing conditions and quotes the first line whole
    results = results_file({("hello_world", "dice"): [Case("roll_6", {TRAJECTORY: [[0.0]]})]})
    first = verdict_lines(old, results)[0]
    assert first.startswith("adk-eval-gate: FAIL — 4 failing conditions (regression: hello_world/dice ")
    # a version-2 file holds data: a bare sentence there is refused, not guessed at
    with pytest.raises(ValidationError):
        Comparison.model_validate({**data, "schema_version": 2})
