"""report.html with more cases than one page of rows, in real headless Chromium: the table holds the first 100, "Show
more" adds the next ones, and the filters, their counts and the search still cover every case (a case far past the
first page is found, and opens with its turns)."""

from __future__ import annotations

import pytest

from adk_eval_gate.report.html import render_html
from tests.support.browser import chromium, console_errors, open_page
from tests.support.report_data import TRAJECTORY, Case, results_file
from tests.unit.report.test_report_browser import case_row, js, visible_cases

TOTAL = 230
FAILED = {i for i in range(TOTAL) if i % 9 == 4}  # 26 failed cases spread over every page


def key(i: int) -> str:
    return f"shop/big/case_{i:03d}"


@pytest.fixture(scope="module")
def browser():
    with chromium() as session:
        yield session


@pytest.fixture(scope="module")
def page(tmp_path_factory):
    cases = [
        Case(f"case_{i:03d}", {TRAJECTORY: [[0.0 if i in FAILED else 1.0]]}, responses=[f"Answer number {i}."])
        for i in range(TOTAL)
    ]
    path = tmp_path_factory.mktemp("pages") / "report.html"
    path.write_text(render_html(results_file({("shop", "big"): cases})), encoding="utf-8")
    return path


def rows(session) -> int:
    return js(session, "return document.querySelectorAll('tr.case').length")


def test_the_table_shows_a_page_and_more_on_request(browser, page):
    open_page(browser, page)
    assert rows(browser) == 100
    more = browser.find_element("id", "more-cases")
    assert more.is_displayed() and "Showing 100 of the 230 matching cases." in more.text
    # Failed cases come first, then the rest in their order.
    first = [key(i) for i in sorted(FAILED)] + [key(i) for i in range(TOTAL) if i not in FAILED]
    assert js(browser, "return [...document.querySelectorAll('tr.case')].map(r => r.dataset.case)") == first[:100]
    more.find_element("css selector", "button").click()
    assert rows(browser) == 200
    more.find_element("css selector", "button").click()
    assert rows(browser) == TOTAL and visible_cases(browser) == {key(i) for i in range(TOTAL)}
    assert not more.is_displayed()
    assert console_errors(browser) == []


def test_filters_counts_and_search_cover_every_case(browser, page):
    open_page(browser, page)
    counts = {
        name: int(browser.find_element("css selector", f"button[data-filter='{name}'] .count").text)
        for name in ("all", "failed", "regressed")
    }
    assert counts == {"all": TOTAL, "failed": len(FAILED), "regressed": 0}
    browser.find_element("css selector", "button[data-filter='failed']").click()
    assert visible_cases(browser) == {key(i) for i in FAILED}
    assert not browser.find_element("id", "more-cases").is_displayed()
    browser.find_element("css selector", "button[data-filter='all']").click()
    browser.find_element("css selector", "input[type=search]").send_keys("case_229")  # the last case of the last page
    assert visible_cases(browser) == {key(229)}
    case_row(browser, key(229)).click()
    detail = js(browser, "return document.querySelector(`tr.detail[data-detail-for='${arguments[0]}']`)", key(229))
    assert detail.is_displayed() and "Answer number 229." in detail.text
    browser.find_element("css selector", "input[type=search]").clear()
    browser.find_element("css selector", "input[type=search]").send_keys("case_22")
    assert visible_cases(browser) == {key(i) for i in range(220, 230)}
    assert detail.is_displayed()  # an opened case stays open while it matches
    assert console_errors(browser) == []


def test_long_verdict_and_eval_set_tables_show_the_rest_on_request(browser, tmp_path):
    from tests.support.report_data import RESPONSE, compared

    sets = [f"set_{i:02d}" for i in range(25)]
    current = results_file({("shop", s): [Case("c", {TRAJECTORY: [[1.0]], RESPONSE: [[1.0]]})] for s in sets})
    baseline = results_file({("shop", s): [Case("c", {TRAJECTORY: [[1.0]], RESPONSE: [[1.0]]})] for s in sets})
    comparison = compared(current, baseline)
    path = tmp_path / "report.html"
    path.write_text(render_html(current, comparison), encoding="utf-8")
    open_page(browser, path)
    verdict_keys = "return [...document.querySelectorAll('tr[data-verdict-key]')].map(r => r.dataset.verdictKey)"
    every = {f"shop/{s}/{n}" for s in sets for n in (TRAJECTORY, RESPONSE)} | {
        f"shop/*/{TRAJECTORY}",
        f"shop/*/{RESPONSE}",
    }
    assert len(js(browser, verdict_keys)) == 50 and set(js(browser, verdict_keys)) < every
    tables = {
        section: browser.find_element("css selector", f"#{section} p.more") for section in ("verdicts", "eval-sets")
    }
    assert "Showing 50 of 52 verdicts." in tables["verdicts"].text
    assert "Showing 20 of 25 eval sets." in tables["eval-sets"].text
    for more in tables.values():
        more.find_element("css selector", "button").click()
        assert not more.is_displayed()
    assert set(js(browser, verdict_keys)) == every
    shown = js(
        browser,
        "return new Set([...document.querySelectorAll('#eval-sets tr[data-eval-set]')]"
        ".map(r => r.dataset.evalSet)).size",
    )
    assert shown == 25 and console_errors(browser) == []


# Installed before the page's own script runs (DevTools, so the page's policy does not apply to it): as soon as the
# first case row exists, click it and keep what its drill-down says at that moment.
EARLY_CLICK = """
const poll = setInterval(() => {
  const row = document.querySelector('tr.case');
  if (!row) return;
  clearInterval(poll);
  row.click();
  window.__early = document.querySelector('tr.detail').innerText;
}, 1);
"""


def test_a_case_opened_before_its_part_arrived_fills_in(page):
    with chromium() as session:
        session.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": EARLY_CLICK})
        open_page(session, page)
        assert js(session, "return window.__early") == "Loading this case's runs…"
        first = js(session, "return document.querySelector('tr.case').dataset.case")
        detail = js(session, "return document.querySelector(`tr.detail[data-detail-for='${arguments[0]}']`)", first)
        number = int(first.rsplit("_", 1)[1])
        assert detail.is_displayed() and f"Answer number {number}." in detail.text
        assert "Loading" not in detail.text and console_errors(session) == []
