"""report.html follows the verdict (issue 25), in real headless Chromium: every regression the banner names leads
to the cases behind it (an eval-set or pooled regression to the cases whose score dropped), the "Regressed"
filter shows them, and "flaky" marks only a criterion whose runs disagreed."""

from __future__ import annotations

import json

import pytest

from adk_eval_gate.report.html import embedded_data, render_html
from tests.support.browser import chromium, console_errors, open_page
from tests.support.report_data import RESPONSE, TRAJECTORY, Case, compared, results_file
from tests.unit.report.test_report_browser import js, visible_cases

SETS = ("checkout", "returns")


def regression_suite():
    """Two eval sets of sixteen one-run cases: fourteen drop from 1 to 0, one holds, one rises. One sample a side makes
    every case row inconclusive, never regressed; together they regress each eval set and the pooled verdict."""
    base, current = {}, {}
    for name in SETS:
        ids = [f"{name}_drop{i}" for i in range(14)] + [f"{name}_same", f"{name}_rise"]
        base[("shop", name)] = [Case(i, {TRAJECTORY: [[0.0 if i.endswith("rise") else 1.0]]}) for i in ids]
        current[("shop", name)] = [Case(i, {TRAJECTORY: [[0.0 if "drop" in i else 1.0]]}) for i in ids]
    return results_file(current), results_file(base)


@pytest.fixture(scope="module")
def browser():
    with chromium() as session:
        yield session


@pytest.fixture(scope="module")
def page(tmp_path_factory):
    current, baseline = regression_suite()
    comparison = compared(current, baseline)
    folder = tmp_path_factory.mktemp("verdicts")
    (folder / "comparison.json").write_text(comparison.model_dump_json())
    path = folder / "report.html"
    path.write_text(render_html(current, comparison), encoding="utf-8")
    return path


def dropped(name: str) -> set[str]:
    return {f"shop/{name}/{name}_drop{i}" for i in range(14)}


def click_link(session, label: str) -> None:
    link = js(
        session,
        "return [...document.querySelectorAll('#verdict a.cases-link')].find(a => a.dataset.casesFor === arguments[0])",
        label,
    )
    assert link is not None, label
    session.execute_script("arguments[0].scrollIntoView({block: 'center'})", link)
    link.click()


def test_the_regressions_the_banner_names_are_eval_set_and_pooled_only(page):
    comparison = json.loads((page.parent / "comparison.json").read_text())
    gating = [(s["eval_set_id"], s["verdict"]) for s in comparison["summaries"] if s["gating"]]
    assert gating == [("checkout", "regressed"), ("returns", "regressed")]
    assert [(p["verdict"], p["gating"]) for p in comparison["pooled"]] == [("regressed", True)]
    assert {r["verdict"] for r in comparison["rows"]} <= {"inconclusive", "unchanged", "improved"}
    data = embedded_data(page.read_text(encoding="utf-8"))
    behind = {v["key"]: set(v["cases"]) for v in data["verdicts"]}
    assert behind == {
        f"shop/*/{TRAJECTORY}": dropped("checkout") | dropped("returns"),
        f"shop/checkout/{TRAJECTORY}": dropped("checkout"),
        f"shop/returns/{TRAJECTORY}": dropped("returns"),
    }


def test_the_regressed_filter_lists_the_cases_behind_an_eval_set_regression(browser, page):
    open_page(browser, page)
    banner = js(browser, "return document.getElementById('verdict').innerText")
    assert "shop / checkout · tool_trajectory_avg_score: ▼ regressed" in banner
    browser.find_element("css selector", "button[data-filter='regressed']").click()
    assert visible_cases(browser) == dropped("checkout") | dropped("returns")
    assert browser.find_element("css selector", "button[data-filter='regressed'] .count").text == "28"
    assert not browser.find_element("id", "no-cases").is_displayed()
    assert console_errors(browser) == []


@pytest.mark.parametrize(
    ("label", "expected"),
    [
        (f"shop / checkout · {TRAJECTORY}", dropped("checkout")),
        (f"shop / returns · {TRAJECTORY}", dropped("returns")),
        (f"shop / all eval sets · {TRAJECTORY}", dropped("checkout") | dropped("returns")),
    ],
)
def test_each_banner_regression_links_to_exactly_its_cases(browser, page, label, expected):
    open_page(browser, page)
    click_link(browser, label)
    assert visible_cases(browser) == expected
    pressed = browser.find_element("css selector", "button[data-filter='regressed']").get_attribute("aria-pressed")
    focus = browser.find_element("id", "case-focus")
    assert (
        pressed == "true" and focus.is_displayed() and f"Showing the {len(expected)} cases behind {label}" in focus.text
    )
    assert not browser.find_element("id", "no-cases").is_displayed()
    browser.find_element("css selector", "button[data-filter='all']").click()  # a filter shows the others again
    assert len(visible_cases(browser)) == 32 and not focus.is_displayed()
    assert console_errors(browser) == []


def test_flaky_marks_only_a_criterion_whose_runs_disagreed(browser, tmp_path):
    """Three runs each: one criterion passing where the other fails, or a second turn failing in every run, is
    deterministic; only runs that disagree on one criterion make a case flaky, marked on that criterion."""
    cases = [
        Case("criteria_differ", {TRAJECTORY: [[1.0]] * 3, RESPONSE: [[0.5]] * 3}),
        Case("one_turn_fails", {TRAJECTORY: [[1.0, 0.0, 1.0]] * 3, RESPONSE: [[0.9, 0.7, 0.9]] * 3}),
        Case("coin", {TRAJECTORY: [[1.0]] * 3, RESPONSE: [[0.9], [0.5], [0.9]]}),
    ]
    current = results_file({("shop", "checkout"): cases})
    path = tmp_path / "report.html"
    path.write_text(render_html(current, compared(current, current)), encoding="utf-8")
    open_page(browser, path)
    browser.find_element("css selector", "button[data-filter='flaky']").click()
    assert visible_cases(browser) == {"shop/checkout/coin"}
    marks = js(
        browser,
        "return [...document.querySelectorAll('tr.case .flaky-mark')]"
        ".map(m => [m.closest('tr').dataset.case, m.closest('td').dataset.criterion])",
    )
    assert marks == [["shop/checkout/coin", RESPONSE]]
    assert console_errors(browser) == []


def drift_page(folder):
    """Ten merges that each broke one more of twenty one-run cases, then a pull request that breaks the eleventh:
    one case against its base (no evidence), eleven against the record ten merges back (a drift regression)."""
    from adk_eval_gate.baseline.history.database import StoredHistory
    from adk_eval_gate.baseline.history.io import HistoryState
    from adk_eval_gate.baseline.history.record_format import History
    from adk_eval_gate.baseline.history.records import record_of
    from adk_eval_gate.baseline.stores import LoadedBaseline, LoadOutcome, identity_of
    from adk_eval_gate.config.history import HistorySection
    from adk_eval_gate.config.workflow_settings import GateSettings
    from adk_eval_gate.gate.comparison_file import build_comparison

    def commit(broken: int, sha: str):
        cases = [Case(f"q{i}", {TRAJECTORY: [[0.0 if i < broken else 1.0]]}) for i in range(20)]
        return results_file({("shop", "checkout"): cases}, sha=sha)

    shas = [f"{i:040x}" for i in range(11)]
    records = [record_of(commit(i, shas[i])) for i in range(11)]
    history = StoredHistory.from_history(History(repository="o/r", config="eval-gate.yml", records=records))
    state = HistoryState(HistorySection(), "test", "o/r", "eval-gate.yml", history=history)
    base, current = commit(10, shas[10]), commit(11, "f" * 40)
    comparison = build_comparison(
        current, LoadOutcome(LoadedBaseline(base, identity_of(base, "baseline.json"))), GateSettings(), history=state
    )
    path = folder / "report.html"
    path.write_text(render_html(current, comparison), encoding="utf-8")
    return path, comparison


def test_a_drift_regression_links_to_the_cases_whose_pass_share_fell(browser, tmp_path):
    path, comparison = drift_page(tmp_path)
    assert [s.verdict for s in comparison.summaries] != ["regressed"] and comparison.verdict == "fail"
    (drift,) = comparison.history.drift
    assert drift.verdict == "regressed" and drift.gating
    # (the eval set's own small drop is also unconfirmed at this design: another failing condition, not a regression)
    assert any(f.text.startswith("drift: shop tool_trajectory_avg_score since ") for f in comparison.gate.failures)
    behind = {f"shop/checkout/q{i}" for i in range(11)}
    assert set(drift.dropped_cases) == behind
    open_page(browser, path)
    browser.find_element("css selector", "button[data-filter='regressed']").click()
    assert visible_cases(browser) == behind and not browser.find_element("id", "no-cases").is_displayed()
    browser.find_element("css selector", "button[data-filter='all']").click()
    click_link(browser, f"drift: shop · {TRAJECTORY}")
    assert visible_cases(browser) == behind
    assert "Showing the 11 cases behind drift: shop" in browser.find_element("id", "case-focus").text
    assert console_errors(browser) == []
