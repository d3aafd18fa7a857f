"""report.html in a real browser (headless Chromium over file://): it renders offline with no console error and
no request beyond itself, the filters and the drill-down work when clicked, every number shown is the one in
results.json and comparison.json, and hostile agent text stays text."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from adk_eval_gate.evalsets.adk_eval_schema import Invocation
from adk_eval_gate.report.html import render_html
from tests.support.browser import chromium, console_errors, open_page, requested_urls
from tests.support.report_data import RESPONSE, TRAJECTORY, Case, compared, invocation, results_file

HOSTILE_ID = '</script><script>window.__pwned=1</script><img src=x onerror="window.__pwned=2">'
HOSTILE_TEXT = 'Done. </script><script>window.__pwned=3</script> <img src=x onerror="window.__pwned=4"> &amp; \u2028'
VOTES = "rubric_1: yes; rubric_2: no"
HISTORY = [
    {"sha": "a" * 40, "date": "2025-12-30", "criteria": {f"shop/checkout/{TRAJECTORY}": 0.9}},
    {"sha": "b" * 40, "date": "2025-12-31", "criteria": {f"shop/checkout/{TRAJECTORY}": 0.8}},
]


def suite():
    ones, zeros, mixed = [[1.0]] * 5, [[0.0]] * 5, [[1.0], [0.0], [1.0], [0.0], [1.0]]

    def both(runs):
        return {TRAJECTORY: runs, RESPONSE: runs}

    ids = (
        "regressed_case",
        "flaky_case",
        "failed_case",
        "passing_case",
        "errored_case",
        "not_run_case",
        HOSTILE_ID,
    )
    base = [Case(i, both(mixed if i == "flaky_case" else zeros if i == "failed_case" else ones)) for i in ids]
    current = [
        Case("regressed_case", {TRAJECTORY: zeros, RESPONSE: [[0.5]] * 5}, details=VOTES),
        Case("flaky_case", both(mixed)),
        Case("failed_case", both(zeros)),
        Case("passing_case", both(ones)),
        Case("errored_case", both([None] * 5), reason="every run errored: the agent raised TimeoutError"),
        Case("not_run_case", both([None]), status="not_run", reason="the spending limit was reached"),
        Case(HOSTILE_ID, both(ones), responses=[HOSTILE_TEXT], calls=[("roll_die", {"sides": "<script>x"})]),
    ]
    return results_file({("shop", "checkout"): current}), results_file({("shop", "checkout"): base})


EXPECTED = {
    ("shop", "checkout", "regressed_case"): [
        Invocation.model_validate(
            invocation("Roll a 12 sided die", "I rolled a 10 sided die and got 8.", [("roll_die", {"sides": 10})])
        )
    ]
}


@pytest.fixture(scope="module")
def browser():
    with chromium() as session:
        yield session


@pytest.fixture(scope="module")
def page(tmp_path_factory):
    current, baseline = suite()
    comparison = compared(current, baseline, fail_on=["regression", "case_regression", "error"])
    folder = tmp_path_factory.mktemp("report")
    (folder / "results.json").write_text(current.model_dump_json())
    (folder / "comparison.json").write_text(comparison.model_dump_json())
    path = folder / "report.html"
    path.write_text(
        render_html(
            current,
            comparison,
            EXPECTED,
            HISTORY,
            run_url="https://github.com/o/r/actions/runs/9",
            report_url="https://github.com/o/r/actions/runs/9#artifacts",
        ),
        encoding="utf-8",
    )
    return path


def js(session, script: str, *args):
    return session.execute_script(script, *args)


def case_row(session, key: str):
    return js(
        session,
        "return [...document.querySelectorAll('tr.case')].find(r => r.dataset.case === arguments[0])",
        key,
    )


def visible_cases(session) -> set[str]:
    return set(
        js(
            session,
            "return [...document.querySelectorAll('tr.case')].filter(r => !r.hidden).map(r => r.dataset.case)",
        )
    )


def fmt(value: float | None) -> str:
    return "—" if value is None else f"{value:.3f}"


def signed(value: float | None) -> str:
    return (
        "—" if value is None else ("−" if value < 0 and f"{abs(value):.3f}" != "0.000" else "+") + f"{abs(value):.3f}"
    )


def test_it_renders_offline_without_a_console_error_or_any_request(browser, page):
    open_page(browser, page)
    assert js(browser, "return document.documentElement.getAttribute('data-state')") == "ready"
    assert console_errors(browser) == []
    assert requested_urls(browser, page) == [page.resolve().as_uri()]
    assert js(browser, "return performance.getEntriesByType('resource').length") == 0
    csp = js(browser, "return document.querySelector('meta[http-equiv=Content-Security-Policy]').content")
    assert csp.startswith("default-src 'none'; script-src 'sha256-") and "unsafe" not in csp
    assert js(browser, "return typeof window.renderDetail") == "undefined"  # nothing leaks onto window


def test_the_verdict_and_why_come_first(browser, page):
    open_page(browser, page)
    first = js(browser, "return document.getElementById('app').firstElementChild")
    assert first.get_attribute("id") == "verdict" and first.get_attribute("data-verdict") == "fail"
    comparison = json.loads((page.parent / "comparison.json").read_text())
    assert comparison["gate"]["reason"] in first.text
    kept = ("regression", "case_regression")
    others = [f["text"] for f in comparison["gate"]["failures"] if f["kind"] not in kept]
    assert others and all(failure in first.text for failure in others)  # the errors and the case not run
    gating = [r for r in comparison["rows"] if r["gating"]]
    assert gating
    for row in gating:  # each statistical verdict behind the failure, with its estimate and p-value in words
        line = next(
            li.text
            for li in first.find_elements("css selector", ".evidence-list li")
            if li.text.startswith(f"shop/checkout/{row['eval_id']} · {row['criterion']}")
        )
        assert f"fell by {fmt(-row['delta'])}, from {fmt(row['baseline'])} to {fmt(row['current'])}" in line
        assert (
            f"p = {row['p_value']:.2g}: if nothing had changed, "
            "a drop at least this large would turn up about 1 time in" in line
        )


def test_every_number_is_the_one_in_the_files(browser, page):
    open_page(browser, page)
    results = json.loads((page.parent / "results.json").read_text())
    comparison = json.loads((page.parent / "comparison.json").read_text())
    for summary in comparison["summaries"]:
        key = f"{summary['agent']}/{summary['eval_set_id']}/{summary['criterion']}"
        cells = js(
            browser,
            "return [...[...document.querySelectorAll('tr[data-verdict-key]')]"
            ".find(r => r.dataset.verdictKey === arguments[0]).cells].map(c => c.innerText)",
            key,
        )
        assert cells[2].split("\n")[0] == f"{fmt(summary['baseline'])} → {fmt(summary['current'])}"
        assert cells[3] == signed(summary["delta"])
        assert (
            cells[4] == f"{round(summary['baseline_pass_rate'] * 100)}% → {round(summary['current_pass_rate'] * 100)}%"
        )
        assert f"from {fmt(summary['baseline'])} to {fmt(summary['current'])}" in cells[6] or "did not move" in cells[6]
    for case in results["eval_sets"][0]["cases"]:
        key = f"shop/checkout/{case['eval_id']}"
        for name, metric in case["metrics"].items():
            text = js(
                browser,
                "return arguments[0].querySelector(`td[data-criterion='${arguments[1]}']`).innerText",
                case_row(browser, key),
                name,
            )
            assert text.split("\n")[0] == fmt(metric["score"]), (key, name)
    counts = results["summary"]
    facts = js(browser, "return document.querySelector('.facts').innerText")
    assert (
        f"{counts['total']} · {counts['passed']} passed · {counts['failed']} failed · {counts['error']} errors" in facts
    )


def test_filters_show_exactly_their_cases(browser, page):
    open_page(browser, page)
    expected = {
        "all": {
            f"shop/checkout/{c}"
            for c in (
                "regressed_case",
                "flaky_case",
                "failed_case",
                "passing_case",
                "errored_case",
                "not_run_case",
                HOSTILE_ID,
            )
        },
        "regressed": {"shop/checkout/regressed_case"},
        "failed": {"shop/checkout/regressed_case", "shop/checkout/flaky_case", "shop/checkout/failed_case"},
        "flaky": {"shop/checkout/flaky_case"},
        "error": {"shop/checkout/errored_case"},
        "not_run": {"shop/checkout/not_run_case"},
    }
    for name, keys in expected.items():
        browser.find_element("css selector", f"button[data-filter='{name}']").click()
        assert visible_cases(browser) == keys, name
        assert (
            browser.find_element("css selector", f"button[data-filter='{name}']").get_attribute("aria-pressed")
            == "true"
        )
        count = browser.find_element("css selector", f"button[data-filter='{name}'] .count").text
        assert int(count) == len(keys)
    browser.find_element("css selector", "button[data-filter='changed']").click()
    assert "shop/checkout/regressed_case" in visible_cases(browser)
    assert "shop/checkout/passing_case" not in visible_cases(browser)
    browser.find_element("css selector", "button[data-filter='all']").click()
    browser.find_element("css selector", "input[type=search]").send_keys("flaky")
    assert visible_cases(browser) == {"shop/checkout/flaky_case"}
    assert console_errors(browser) == []


def test_the_drill_down_shows_turns_tool_calls_responses_votes_and_usage(browser, page):
    open_page(browser, page)
    case_row(browser, "shop/checkout/regressed_case").click()
    detail = js(
        browser,
        "return document.querySelector(\"tr.detail[data-detail-for='shop/checkout/regressed_case']\")",
    )
    assert detail.is_displayed()
    text = detail.text
    assert "Turn 1" in text and "Roll a 12 sided die" in text
    assert 'roll_die({"sides":10})' in text and 'roll_die({"sides":12})' in text
    assert js(browser, "return arguments[0].querySelector('[data-arg=sides]').innerText", detail) == "sides: 10 → 12"
    assert js(
        browser,
        "return [...arguments[0].querySelectorAll('.response.expected del')].map(e => e.innerText)",
        detail,
    ) == ["10"]
    assert js(
        browser,
        "return [...arguments[0].querySelectorAll('.response.actual ins')].map(e => e.innerText)",
        detail,
    ) == ["12"]
    assert VOTES in text and "regressed" in text and "p = " in text
    assert "$0.0013" in text and "101" in text  # run 2's input tokens and every run's cost
    second = detail.find_element("css selector", ".run-picker button[data-run='1']")
    second.click()
    assert second.get_attribute("aria-pressed") == "true" and detail.is_displayed()
    toggle = case_row(browser, "shop/checkout/regressed_case").find_element("css selector", ".toggle")
    browser.execute_script("arguments[0].scrollIntoView({block: 'center'})", toggle)  # out from under the sticky header
    toggle.click()
    assert not detail.is_displayed() and toggle.get_attribute("aria-expanded") == "false"
    assert console_errors(browser) == []


def test_hostile_agent_text_never_runs_and_shows_literally(browser, page):
    open_page(browser, page)
    key = f"shop/checkout/{HOSTILE_ID}"
    row = case_row(browser, key)
    assert row is not None and row.find_element("css selector", ".id").text == HOSTILE_ID
    row.click()
    detail = js(
        browser,
        "return [...document.querySelectorAll('tr.detail')].find(r => r.dataset.detailFor === arguments[0])",
        key,
    )
    assert HOSTILE_TEXT.replace("\u2028", "").strip() in detail.text.replace("\u2028", "")
    assert '{"sides":"<script>x"}' in detail.text
    assert js(browser, "return window.__pwned === undefined")
    assert js(browser, "return document.images.length") == 0
    assert js(browser, "return document.scripts.length") == 2  # the data and the page's own script
    assert console_errors(browser) == []


def test_a_history_draws_a_sparkline_per_criterion_and_none_without(browser, page, tmp_path):
    open_page(browser, page)
    points = js(
        browser,
        "return document.querySelector(`svg[data-spark='shop/checkout/${arguments[0]}'] polyline`)"
        ".getAttribute('points').split(' ').length",
        TRAJECTORY,
    )
    assert points == len(HISTORY) + 1  # this run is appended
    current, baseline = suite()
    bare = tmp_path / "report.html"
    bare.write_text(render_html(current, compared(current, baseline)), encoding="utf-8")
    open_page(browser, bare)
    assert js(browser, "return document.querySelectorAll('svg.spark').length") == 0
    assert console_errors(browser) == []


def test_results_alone_render_without_a_verdict(browser, tmp_path):
    current, _ = suite()
    path = tmp_path / "report.html"
    path.write_text(render_html(current), encoding="utf-8")
    open_page(browser, path)
    assert js(browser, "return document.getElementById('verdict').dataset.verdict") == "none"
    assert js(browser, "return document.getElementById('verdicts')") is None
    assert len(visible_cases(browser)) == 7 and console_errors(browser) == []


def test_adaptive_rows_say_which_estimate(browser, tmp_path):
    from tests.unit.report.test_report_estimates import adaptive_pair

    current, baseline = adaptive_pair()
    comparison = compared(current, baseline)
    path = tmp_path / "report.html"
    path.write_text(render_html(current, comparison), encoding="utf-8")
    open_page(browser, path)
    summary = next(s for s in comparison.summaries if s.eval_set_id == "a")
    cell = js(
        browser,
        "return [...document.querySelectorAll('tr[data-verdict-key]')]"
        ".find(r => r.dataset.verdictKey === 'shop/a/tool_trajectory_avg_score').cells[2].innerText",
    )
    assert cell == f"{fmt(summary.baseline)} → {fmt(summary.current)}\nfirst round vs whole baseline"
    assert console_errors(browser) == []


def test_a_missing_browser_fails_when_required(monkeypatch):
    from tests.support import browser as helper

    monkeypatch.setattr(helper.shutil, "which", lambda name: None)
    monkeypatch.setenv("ADK_EVAL_GATE_BROWSER_TESTS", "required")
    with pytest.raises(pytest.fail.Exception, match="required but no chromium"):
        helper.need_browser()
    monkeypatch.delenv("ADK_EVAL_GATE_BROWSER_TESTS")
    with pytest.raises(pytest.skip.Exception, match="no chromium"):
        helper.need_browser()


def test_the_page_is_one_file(page):
    html = Path(page).read_text(encoding="utf-8")
    assert '<link rel="stylesheet"' not in html and " src=" not in html.split('id="adk-eval-gate-data"')[0]
