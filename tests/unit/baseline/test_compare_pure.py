"""compare returns new rows: its inputs, and the drift rows it decides with the gating family, are left as given."""

from __future__ import annotations

from adk_eval_gate.baseline.compare import compare
from adk_eval_gate.baseline.comparison_format import DriftRow
from adk_eval_gate.baseline.row_notes import StatusNote, VerdictNote
from adk_eval_gate.baseline.stats import stratified_test
from tests.support.report_data import TRAJECTORY, Case, results_file


def _suite(score: float):
    cases = [Case(f"c{i}", {TRAJECTORY: [[score]] * 5}) for i in range(6)]
    return results_file({("a", "s1"): cases, ("a", "s2"): cases})


def test_compare_edits_neither_its_inputs_nor_the_drift_rows_it_decides():
    base, now = _suite(1.0), _suite(0.0)
    drift = DriftRow(
        agent="a", criterion=TRAJECTORY, baseline=1.0, current=0.0, delta=-1.0, verdict="unchanged", reason=""
    )
    test = stratified_test([([1.0] * 5, [0.0] * 5)] * 6)
    before = (base.model_copy(deep=True), now.model_copy(deep=True), drift.model_copy())
    compared = compare(now, base, lambda _: 0.05, 0.05, also_gating=[(drift, test, 0.05)])
    assert (base, now, drift) == before
    (decided,) = compared.also_gating
    assert decided is not drift and decided.verdict == "regressed" and decided.reason == ""  # a note, no sentence
    assert decided.note == VerdictNote(
        kind="dropped", delta=-1.0, tolerance=0.05, p=decided.p_value, alpha=0.05, method=decided.note.method
    )
    assert [p.verdict for p in compared.pooled] == ["regressed"]
    assert isinstance(compared.pooled[0].note, VerdictNote) and compared.pooled[0].note.pooled_over == (12, 2)
    assert {s.verdict for s in compared.summaries} == {"regressed"} and len(compared.rows) == 12


def test_rows_not_compared_carry_why_as_a_note_and_no_sentence():
    base, now = _suite(1.0), _suite(1.0)
    now.eval_sets[0].cases[0].case_hash = "edited"
    now.eval_sets[1].cases = [c for c in now.eval_sets[1].cases if c.eval_id != "c5"]
    compared = compare(now, base, lambda _: 0.05, 0.05)
    notes = {(r.eval_set_id, r.eval_id): r.note for r in compared.rows if r.verdict != "unchanged"}
    assert notes == {("s1", "c0"): StatusNote(kind="case_edited"), ("s2", "c5"): StatusNote(kind="case_removed")}
    assert all(r.reason == "" and r.note is not None for r in [*compared.rows, *compared.summaries])
