"""The comment never loses what matters, whatever the suite's shape: on 1 to 5,000 eval sets, none to every one
regressed, long names, it stays within GitHub's 65,536 characters with the headline, the cases behind the
regressions and what was left out (with counts) all present, and the footer last — never the blind cut."""

from __future__ import annotations

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from adk_eval_gate.handshake.limits import COMMENT_LIMIT
from adk_eval_gate.report.escape import inline
from adk_eval_gate.report.markdown import render_report
from tests.support.report_data import RESPONSE, TRAJECTORY, Case, compared, results_file

RUNS = 5  # enough samples a side for a broken case to be confirmed


def _suite(sets: int, cases: int, regressed: float, name_length: int):
    stem = ("eval_set_" + "x" * name_length)[:name_length]
    broken = round(sets * regressed)
    current, baseline = {}, {}
    for s in range(sets):
        key = ("agent", f"{stem}_{s:05d}")
        ids = [f"case_{c}" for c in range(cases)]
        baseline[key] = [Case(i, {TRAJECTORY: [[1.0]] * RUNS, RESPONSE: [[1.0]] * RUNS}) for i in ids]
        now = [[0.0]] * RUNS if s < broken else [[1.0]] * RUNS
        current[key] = [Case(i, {TRAJECTORY: now, RESPONSE: [[1.0]] * RUNS}) for i in ids]
    return results_file(current), results_file(baseline)


@settings(max_examples=6, deadline=None, suppress_health_check=list(HealthCheck))
@example(sets=1000, cases=2, regressed=0.9, name_length=60)  # the shape, 2,000 eval-set rows
@example(sets=5000, cases=1, regressed=1.0, name_length=90)
@example(sets=1, cases=1, regressed=0.0, name_length=1)
@given(
    sets=st.integers(1, 5000),
    cases=st.integers(1, 2),
    regressed=st.floats(0.0, 1.0),
    name_length=st.integers(1, 90),
)
def test_every_comment_fits_and_keeps_what_matters(sets, cases, regressed, name_length):
    current, baseline = _suite(sets, cases, regressed, name_length)
    comparison = compared(current, baseline)
    text = render_report(comparison, current, {})
    assert len(text) <= COMMENT_LIMIT
    assert "the report was cut to fit" not in text  # the levels sufficed: nothing was cut blind
    lines = text.strip().splitlines()
    assert lines[0].startswith("## ")  # the headline
    assert lines[-1].startswith("<sub>") and "adk-eval-gate 0.2.0" in lines[-1]  # the footer, last
    regressed_sets = [s for s in comparison.summaries if s.verdict == "regressed"]
    if regressed_sets:
        assert "❌" in lines[0]
        assert "### Cases behind the regressions" in text

    def row(summary) -> str:
        return f"| agent / {inline(summary.eval_set_id)} | {inline(summary.criterion)} |"

    shown_sets = sum(row(s) in text for s in comparison.summaries)
    assert shown_sets >= 1
    if shown_sets < len(comparison.summaries):
        hidden = len(comparison.summaries) - shown_sets
        assert f"… and {hidden} more eval-set rows" in text  # what was left out, counted
        # nothing quiet is shown while a regression is left out
        first_quiet = next((s for s in comparison.summaries if s.verdict != "regressed"), None)
        if first_quiet is not None and len(regressed_sets) > shown_sets:
            assert row(first_quiet) not in text
