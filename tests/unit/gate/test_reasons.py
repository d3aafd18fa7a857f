"""gate/reasons.py: every compared row's note becomes the sentence the comparison file stores, and only there."""

from __future__ import annotations

import pydantic
import pytest

from adk_eval_gate.baseline.comparison_format import DriftRow, EfficiencyRow, PooledSummary, Row, Summary
from adk_eval_gate.baseline.row_notes import EfficiencyNote, Settle, StatusNote, Unconfirmed, VerdictNote
from adk_eval_gate.gate.reasons import reason, settle_text

_ROW = {"agent": "a", "criterion": "c", "baseline": 1.0, "current": 0.5, "delta": -0.5, "verdict": "inconclusive"}


def _summary(note: VerdictNote | StatusNote | None, text: str = "") -> Summary:
    return Summary(eval_set_id="s", reason=text, note=note, **_ROW)


@pytest.mark.parametrize(
    ("note", "expected"),
    [
        (
            VerdictNote(kind="one_sample_within", delta=0.02, tolerance=0.05),
            "one sample a side, changed +0.020, within tolerance 0.05",
        ),
        (
            VerdictNote(kind="one_sample_beyond", delta=-1.0, tolerance=0.05, values=(1.0, None)),
            "1.000 → n/a; one sample a side, changed -1.000: not enough evidence alone",
        ),
        (
            VerdictNote(kind="dropped", delta=-0.4, tolerance=0.05, p=0.0012, alpha=0.01, method="permutation"),
            "dropped 0.400 (≥ tolerance 0.05), p = 0.0012 < 0.01 (permutation)",
        ),
        (
            VerdictNote(kind="rose", delta=0.4, tolerance=0.05, p=0.003, alpha=0.01, method="stratified"),
            "rose 0.400 (≥ tolerance 0.05), p = 0.003 < 0.01 (stratified)",
        ),
        (VerdictNote(kind="within", delta=-0.01, tolerance=0.05), "changed -0.010, within tolerance 0.05"),
        (
            VerdictNote(kind="beyond", delta=-0.2, tolerance=0.05, p=0.2, alpha=0.01, counted_in="eval_set"),
            "changed -0.200, beyond tolerance 0.05 but p = 0.2 ≥ 0.01: could be noise; more num_runs would settle it"
            "; counted in the eval-set verdict",
        ),
        (
            VerdictNote(kind="cannot_reach", delta=-1.0, tolerance=0.05, alpha=0.01, smallest=0.5, counted_in="pooled"),
            "changed -1.000, beyond tolerance 0.05, but these samples cannot reach p < 0.01 (at best p = 0.5): not "
            "enough evidence alone, so it does not gate; counted in the pooled verdict",
        ),
        (
            VerdictNote(kind="within", delta=0.0, tolerance=0.05, pooled_over=(12, 2)),
            "changed +0.000, within tolerance 0.05; 12 cases in 2 eval sets",
        ),
        (
            VerdictNote(
                kind="dropped",
                delta=-0.5,
                tolerance=0.05,
                p=0.001,
                alpha=0.01,
                method="m",
                since="abc1234 (3 merges back)",
                means=(0.9, 0.4, 11),
            ),
            "since abc1234 (3 merges back): dropped 0.500 (≥ tolerance 0.05), p = 0.001 < 0.01 (m); mean score "
            "0.900 → 0.400 over 11 cases",
        ),
    ],
)
def test_a_verdict_note_reads_as_the_rule_that_decided_it_then_what_was_added(note, expected):
    assert reason(_summary(note)) == expected


def test_an_unconfirmed_drop_says_what_the_design_confirms_and_never_that_it_does_not_gate():
    marked = Unconfirmed(
        touched=1,
        cases=3,
        first_runs=2,
        max_runs=4,
        baseline_runs=5,
        pooled_cases=9,
        significant=None,
        alpha=0.01,
        settle=Settle(kind="more_cases", cases=3),
    )
    note = VerdictNote(kind="cannot_reach", delta=-0.3, tolerance=0.05, alpha=0.01, smallest=0.25, unconfirmed=marked)
    text = reason(_summary(note))
    assert "so it does not gate" not in text
    assert text.endswith(
        "not enough evidence alone; unconfirmed: the drop touches at least 1 case and 3 case(s) × {2–4} runs, "
        "baseline 5, pooled with the agent's other eval sets (9 cases), confirms nothing at alpha 0.01, so the gate "
        "cannot know; only more cases can settle it: no num_runs up to max 20 confirms so small a drop on 3 cases"
    )
    fixed = marked.model_copy(
        update={
            "first_runs": 1,
            "max_runs": 1,
            "baseline_runs": 1,
            "pooled_cases": None,
            "significant": 4,
            "touched": 2,
        }
    )
    assert reason(_summary(note.model_copy(update={"unconfirmed": fixed}))).endswith(
        "touches at least 2 cases and 3 case(s) × 1 run confirms only a clean break of 4 or more cases, so the gate "
        "cannot know; only more cases can settle it: no num_runs up to max 20 confirms so small a drop on 3 cases"
    )


def test_what_would_settle_an_unconfirmed_drop_names_the_num_runs_or_more_cases():
    assert settle_text(Settle(kind="more_runs", runs=(2, 8), cases=5)) == (
        "num_runs: {min: 2, max: 8} would settle it: every case runs 2 times, a case that looks worse up to 8 "
        "(the default branch's push runs 8)"
    )
    assert settle_text(Settle(kind="more_cases", cases=5)).startswith("only more cases can settle it: ")


@pytest.mark.parametrize(
    ("note", "expected"),
    [
        (StatusNote(kind="case_new"), "not in the baseline"),
        (StatusNote(kind="case_removed"), "no longer evaluated"),
        (StatusNote(kind="case_edited"), "the eval case was edited since the baseline"),
        (
            StatusNote(kind="threshold_changed", criterion="c", thresholds=(0.8, 0.5)),
            "the c configuration changed since the baseline (threshold 0.8 → 0.5)",
        ),
        (StatusNote(kind="options_changed", criterion="c"), "the c options changed since the baseline"),
        (StatusNote(kind="not_run"), "not run"),
        (StatusNote(kind="not_run", detail="budget spent"), "budget spent"),
        (StatusNote(kind="errored", side="baseline", detail="boom"), "the baseline errored: boom"),
        (StatusNote(kind="no_score", side="current run"), "the current run has no score: no score"),
        (StatusNote(kind="set_new"), "no baseline for this eval set and criterion yet"),
        (StatusNote(kind="criterion_removed"), "the criterion is no longer configured"),
        (StatusNote(kind="none_compared"), "no case could be compared with the baseline"),
        (StatusNote(kind="set_removed"), "the eval set is no longer run"),
    ],
)
def test_a_status_note_says_why_nothing_was_compared(note, expected):
    assert reason(Row(eval_set_id="s", eval_id="e", reason="", note=note, **_ROW)) == expected


@pytest.mark.parametrize(
    ("kind", "p", "expected"),
    [
        ("regressed", 0.001, ": ≥ tolerance +20%, p = 0.001 < 0.01"),
        ("improved", 0.002, ": beyond tolerance, p = 0.002 < 0.01"),
        ("within", 0.5, ": within tolerance ±20%"),
        ("beyond", 0.3, ": beyond tolerance but p = 0.3 ≥ 0.01: could be noise"),
    ],
)
def test_an_efficiency_note_reads_with_its_rows_figures(kind, p, expected):
    row = EfficiencyRow(
        agent="a",
        eval_set_id="s",
        metric="cost",
        baseline=0.002,
        current=0.003,
        change=0.5,
        tolerance=0.2,
        verdict="unchanged",
        reason="",
        cases_compared=4,
        note=EfficiencyNote(kind=kind, p=p, alpha=0.01),
    )
    assert reason(row) == "+50% per run (0.002 → 0.003 USD, 4 cases)" + expected


def test_a_row_read_from_a_comparison_file_keeps_its_stored_reason_and_never_stores_a_note():
    note = VerdictNote(kind="within", delta=0.0, tolerance=0.05)
    row = PooledSummary(reason="as stored", note=note, **_ROW)
    assert "note" not in row.model_dump() and "note" not in row.model_dump_json()
    read = PooledSummary.model_validate_json(row.model_dump_json())
    assert read.note is None and reason(read) == "as stored"
    drift = DriftRow(reason="stored drift", **_ROW)
    assert reason(drift) == "stored drift"


def test_notes_are_frozen():
    with pytest.raises(pydantic.ValidationError):
        VerdictNote(kind="within", delta=0.0, tolerance=0.05).delta = 1.0  # type: ignore[misc]
