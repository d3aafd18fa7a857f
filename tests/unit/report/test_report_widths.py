"""report.html from a phone (400 px) to a wide screen, in real headless Chromium: the page never scrolls sideways
(a wide table scrolls in place), with every case's detail open too, and case ids are not broken mid-word."""

from __future__ import annotations

import pytest

from adk_eval_gate.report.html import render_html
from tests.support.browser import chromium, open_page
from tests.support.report_data import compared
from tests.unit.report.test_report_browser import EXPECTED, HISTORY, suite

# Every visible element whose right edge passes the viewport without an ancestor that scrolls or clips it.
OVERFLOW = """
const width = document.documentElement.clientWidth;
const escaping = [];
for (const element of document.querySelectorAll('body *')) {
  const box = element.getBoundingClientRect();
  if (box.right <= width + 1 || element.offsetParent === null) continue;
  let parent = element.parentElement, held = false;
  while (parent && !held) {
    held = ['auto', 'scroll', 'hidden'].includes(getComputedStyle(parent).overflowX);
    parent = parent.parentElement;
  }
  if (!held) escaping.push(`${element.tagName}.${element.className} ends at ${Math.round(box.right)}`);
}
return {width, scroll: document.documentElement.scrollWidth, escaping: escaping.slice(0, 10)};
"""

# Lines an id's text is laid out on: 1 unless the id was broken.
ID_LINES = """
return [...document.querySelectorAll('.case-id .id')].filter(e => e.offsetParent !== null).map(e => {
  const range = document.createRange(); range.selectNodeContents(e);
  const tops = new Set([...range.getClientRects()].map(r => Math.round(r.top)));
  return [e.textContent, tops.size];
});
"""


@pytest.fixture(scope="module")
def page(tmp_path_factory):
    current, baseline = suite()
    comparison = compared(current, baseline, fail_on=["regression", "case_regression", "error"])
    path = tmp_path_factory.mktemp("widths") / "report.html"
    path.write_text(render_html(current, comparison, EXPECTED, HISTORY), encoding="utf-8")
    return path


@pytest.mark.parametrize("width", [400, 800, 1400, 2200])
def test_the_page_fits_the_screen_with_every_detail_open(page, width):
    with chromium() as browser:
        browser.set_window_size(width, 900)
        open_page(browser, page)
        for state in ("closed", "open"):
            if state == "open":
                browser.execute_script("for (const row of document.querySelectorAll('tr.case')) row.click();")
            found = browser.execute_script(OVERFLOW)
            assert found["scroll"] <= found["width"], (width, state, found)
            assert found["escaping"] == [], (width, state, found)
        short_ids = [(text, lines) for text, lines in browser.execute_script(ID_LINES) if len(text) <= 30]
        assert short_ids and all(lines == 1 for _, lines in short_ids), short_ids
