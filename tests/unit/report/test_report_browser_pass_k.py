"""report.html's Reliability section (issue 36.4), in real headless Chromium: each eval set's pass^k with its
interval, the baseline's and the gate.pass_k verdict when compared, the least reliable cases with their run
tallies; k beyond the runs says it cannot be estimated. A drift regression's data names where the slide began."""

from __future__ import annotations

import pytest

from adk_eval_gate.baseline.pass_k import estimate
from adk_eval_gate.report.html import embedded_data, render_html
from tests.support.browser import chromium, console_errors, open_page
from tests.support.report_data import RESPONSE, TRAJECTORY, Case, compared, results_file
from tests.unit.report.test_report_browser_verdicts import drift_page

RUNS = 4


def suite(flaky: int):
    """Ten four-run cases with two criteria; the first `flaky` cases fail the trajectory in runs 2 and 3, and q9
    fails the response in run 0 only (a run fails when any criterion with a threshold failed)."""
    cases = []
    for i in range(10):
        trajectory = [[0.0] if i < flaky and run >= 2 else [1.0] for run in range(RUNS)]
        response = [[0.0] if i == 9 and run == 0 else [1.0] for run in range(RUNS)]
        cases.append(Case(f"q{i}", {TRAJECTORY: trajectory, RESPONSE: response}))
    return results_file({("shop", "checkout"): cases})


@pytest.fixture(scope="module")
def browser():
    with chromium() as session:
        yield session


def rows(browser) -> dict[str, list[str]]:
    found = browser.find_elements("css selector", "#reliability tr[data-pass-k]")
    return {r.get_attribute("data-pass-k"): [td.text for td in r.find_elements("tag name", "td")] for r in found}


def test_the_page_shows_pass_k_the_baseline_and_the_gate_verdict(browser, tmp_path):
    current, baseline = suite(flaky=4), suite(flaky=0)
    comparison = compared(current, baseline, pass_k={"k": 2})
    (row,) = comparison.pass_k
    # the pull request: four cases pass 2 of 4 runs (C(2,2)/C(4,2) = 1/6), q9 3 of 4 (1/2), five every run
    expected = (4 * estimate(2, 4, 2) + estimate(3, 4, 2) + 5) / 10
    assert row.current == pytest.approx(expected) and row.verdict == "dropped" and row.gating
    assert comparison.verdict == "fail" and any(
        f.text.startswith("pass^k: shop/checkout pass^2") and f.kind == "pass_k" for f in comparison.gate.failures
    )
    path = tmp_path / "report.html"
    path.write_text(render_html(current, comparison), encoding="utf-8")
    (data,) = embedded_data(path.read_text())["pass_k"]
    assert data["tallies"]["q0"] == [2, 4] and data["tallies"]["q9"] == [3, 4] and data["k"] == 2
    open_page(browser, path)
    (cells,) = rows(browser).values()
    assert cells[1] == "2" and cells[2].startswith(f"{expected:.2f} [") and cells[3] == "0.95"
    assert "regressed" in cells[4] and "gating" in cells[4] and "pass^2 0.95 → 0.62" in cells[4]
    assert cells[5].splitlines()[0] == "q0: 0.17 (2/4 runs passed)" and "q9: 0.50 (3/4 runs passed)" in cells[5]
    assert console_errors(browser) == []


def test_without_the_gate_the_page_shows_pass_n_and_k_beyond_the_runs_cannot_be_estimated(browser, tmp_path):
    current = suite(flaky=1)
    path = tmp_path / "report.html"
    path.write_text(render_html(current, compared(current, suite(flaky=0))), encoding="utf-8")
    open_page(browser, path)
    (cells,) = rows(browser).values()
    assert cells[1] == "4" and cells[2].startswith("0.80 [") and cells[3] == "—" and cells[4] == "—"
    short = tmp_path / "short.html"
    short.write_text(render_html(current, compared(current, suite(flaky=0), pass_k={"k": 5})), encoding="utf-8")
    open_page(browser, short)
    (cells,) = rows(browser).values()
    assert cells[2].startswith("cannot be estimated (k = 5 > runs of q0, q1") and "error" in cells[4]
    assert console_errors(browser) == []


def test_the_drift_data_names_where_the_slide_began(tmp_path):
    path, comparison = drift_page(tmp_path)
    (drift,) = embedded_data(path.read_text())["drift"]
    assert drift["began"]["sha"] == f"{1:040x}" and drift["began"]["shape"] == "slide"
    assert any(
        "the slide began at merge 000000000000 (2026-01-02, 1 after the reference" in f.text
        for f in comparison.gate.failures
    )
