"""Every baseline → current shown beside a change is the pair the change was computed from, or says which
estimate it is: adaptive runs estimate from part of the samples (docs/adaptive-runs.md)."""

from __future__ import annotations

import pytest

from adk_eval_gate.baseline.strata import EXTRA_ROUND, FIRST_ROUND
from adk_eval_gate.report.console import render_comparison
from adk_eval_gate.report.markdown import render_report
from tests.support.report_data import TRAJECTORY, Case, compared, results_file


def adaptive_pair():
    """Two eval sets of an adaptive agent: `steady` stopped after its first round, `broke` got extra runs."""
    base = {
        ("shop", "a"): [
            Case("steady", {TRAJECTORY: [[1.0]] * 6}),
            Case("broke", {TRAJECTORY: [[1.0]] * 5 + [[0.0]]}),
        ],
        ("shop", "b"): [Case("other", {TRAJECTORY: [[1.0]] * 6})],
    }
    current = {
        ("shop", "a"): [
            Case("steady", {TRAJECTORY: [[1.0], [1.0]]}, first_round_runs=2),
            Case("broke", {TRAJECTORY: [[0.0], [0.0], [1.0], [0.0], [1.0], [1.0]]}, first_round_runs=2),
        ],
        ("shop", "b"): [Case("other", {TRAJECTORY: [[1.0], [0.0]]}, first_round_runs=2)],
    }
    return results_file(current, adaptive=(2, 6)), results_file(base)


def test_adaptive_rows_show_the_means_their_change_is_from():
    current, baseline = adaptive_pair()
    comparison = compared(current, baseline)
    summary = next(s for s in comparison.summaries if s.eval_set_id == "a")
    # first round against the whole baseline: (1 + 0) / 2 against (1 + 5/6) / 2, not every sample's 0.75 → 0.917
    assert summary.estimate == FIRST_ROUND
    assert summary.current == pytest.approx(0.5) and summary.baseline == pytest.approx(11 / 12)
    assert summary.current - summary.baseline == pytest.approx(summary.delta)
    broke = next(r for r in comparison.rows if r.eval_id == "broke")
    # its extra runs (3 of 4 passed) against the baseline's second half (2 of 3)
    assert broke.estimate == EXTRA_ROUND
    assert (broke.baseline, broke.current) == (pytest.approx(2 / 3), pytest.approx(0.75))
    steady = next(r for r in comparison.rows if r.eval_id == "steady")
    assert steady.estimate == FIRST_ROUND and steady.delta == 0.0
    for row in [*comparison.pooled, *comparison.summaries, *comparison.rows]:
        if row.delta is not None:
            assert row.current - row.baseline == pytest.approx(row.delta, abs=1e-12), row
    (pooled,) = comparison.pooled
    assert pooled.estimate == FIRST_ROUND and pooled.current - pooled.baseline == pytest.approx(pooled.delta)


def test_fixed_runs_keep_every_sample_and_no_label():
    base = {("shop", "a"): [Case("x", {TRAJECTORY: [[1.0], [1.0]]}), Case("y", {TRAJECTORY: [[1.0], [0.0]]})]}
    current = {("shop", "a"): [Case("x", {TRAJECTORY: [[0.0], [1.0]]}), Case("y", {TRAJECTORY: [[1.0], [0.0]]})]}
    comparison = compared(results_file(current), results_file(base))
    for row in [*comparison.summaries, *comparison.rows]:
        assert row.estimate is None
        assert row.current - row.baseline == pytest.approx(row.delta)


def test_the_comment_and_the_console_say_which_estimate():
    current, baseline = adaptive_pair()
    comparison = compared(current, baseline)
    markdown = render_report(comparison, current, {})
    summary = next(s for s in comparison.summaries if s.eval_set_id == "a")
    assert f"| {summary.baseline:.3f} → {summary.current:.3f} † | {summary.delta:+.3f} |" in markdown
    assert "† adaptive runs: the first round's mean against the whole baseline's" in markdown
    assert f"{summary.baseline:.3f} → {summary.current:.3f} (first round vs whole baseline)" in render_comparison(
        comparison
    )
