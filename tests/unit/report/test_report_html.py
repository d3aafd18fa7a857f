"""report.html without a browser: the embedded data is safe inside <script> and round-trips, the policy hashes are
the page's own, `ci` writes the page beside report.md and says where it is, the comment links it, and
`adk-eval-gate view` renders and opens it (or prints where it is)."""

from __future__ import annotations

import base64
import hashlib
import json
import re
import webbrowser

import pytest

from adk_eval_gate.commands.main import main
from adk_eval_gate.report.html import DATA_ID, embed_json, embedded_data, render_html, report_data
from adk_eval_gate.report.html_cases import expand_case
from adk_eval_gate.report.markdown import render_report
from tests.support.hostile import assert_bad_input
from tests.support.report_data import RESPONSE, TRAJECTORY, Case, compared, results_file
from tests.unit.report.test_report_browser import HOSTILE_ID, HOSTILE_TEXT, suite


def test_embedded_json_cannot_close_its_script_and_round_trips():
    data = {"text": "</script><!-- <script> & \u2028\u2029 > <\\/script>", "n": [1.5, None, True]}
    text = embed_json(data)
    assert not set("<>&\u2028\u2029") & set(text)
    assert json.loads(text) == data
    assert json.loads(embed_json({"x": float("nan"), "y": [float("inf")]})) == {"x": None, "y": [None]}


def test_a_secret_with_markup_characters_is_masked_in_the_page(monkeypatch):
    secret = 's3cr3t<&>"value'
    monkeypatch.setenv("MY_API_KEY", secret)
    current = results_file({("a", "s"): [Case("c", {TRAJECTORY: [[1.0]]}, responses=[f"the key is {secret}"])]})
    page = render_html(current)
    data = embedded_data(page)
    assert secret not in json.dumps(data, ensure_ascii=False) and "***" in data["texts"][1]


def test_the_policy_allows_exactly_the_page_own_script_and_style():
    current, baseline = suite()
    page = render_html(current, compared(current, baseline))
    csp = re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"', page).group(1)
    script = page.rsplit("<script>", 1)[1].split("</script>", 1)[0]
    style = page.split("<style>", 1)[1].split("</style>", 1)[0]

    def digest(text: str) -> str:
        return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode() + "'"

    assert f"script-src {digest(script)};" in csp and f"style-src {digest(style)};" in csp
    assert csp.startswith("default-src 'none';") and "unsafe" not in csp
    assert page.count("<script") == 2 and f'<script type="application/json" id="{DATA_ID}">' in page
    assert HOSTILE_ID not in page and "</script><script>window" not in page  # agent text only inside the escaped JSON
    data = embedded_data(page)
    assert {c["eval_id"] for c in data["cases"]} >= {HOSTILE_ID}
    cases = [expand_case(c, data["texts"]) for c in data["cases"]]
    assert any(HOSTILE_TEXT in t["response"] for c in cases for r in c["runs"] for t in r["turns"] or [])


def test_the_data_has_the_documented_shape_and_tags():
    current, baseline = suite()
    data = report_data(
        current,
        compared(current, baseline, fail_on=["case_regression"]),
        history=[{"sha": "a", "date": "2025-01-01", "criteria": {"x": 0.5, "bad": "no"}}, "junk"],
    )
    assert set(data) == {
        "version",
        "title",
        "verdict",
        "run",
        "baseline",
        "counts",
        "budget",
        "verdicts",
        "efficiency",
        "drift",
        "eval_sets",
        "cases",
        "texts",
        "history",
    }
    assert len(data["texts"]) == len(set(data["texts"]))  # each text once
    tags = {c["eval_id"]: c["tags"] for c in data["cases"]}
    assert tags["regressed_case"] == ["regressed", "failed", "changed"]
    assert tags["flaky_case"] == ["failed", "flaky"] and tags["passing_case"] == []
    flaky = {c["eval_id"]: c["flaky"] for c in data["cases"]}
    assert flaky["flaky_case"] == [TRAJECTORY, RESPONSE] and flaky["regressed_case"] == []
    assert data["drift"] == [] and report_data(current)["drift"] == []
    assert tags["errored_case"] == ["error"] and tags["not_run_case"] == ["not_run"]
    assert data["history"] == [{"sha": "a", "date": "2025-01-01", "criteria": {"x": 0.5}}]
    assert data["verdict"]["state"] == "fail" and data["eval_sets"][0]["means"][TRAJECTORY] is not None
    assert report_data(current)["history"] is None and report_data(current)["verdict"]["state"] == "none"


def test_ci_writes_the_page_beside_report_md_and_says_where(example, tmp_path, monkeypatch, capsys):
    summary, outputs = tmp_path / "summary.md", tmp_path / "outputs.txt"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    monkeypatch.setenv("GITHUB_OUTPUT", str(outputs))
    out = tmp_path / "out"
    code = main(
        [
            "ci",
            "--config",
            str(example / "eval-gate.yml"),
            "--output-dir",
            str(out),
            "--no-comment",
            "--quiet",
        ]
    )
    assert code in (0, 1)
    page = out / "report.html"
    assert (out / "report.md").is_file() and page.is_file()
    data = embedded_data(page.read_text(encoding="utf-8"))
    results = json.loads((out / "results.json").read_text())
    assert [c["key"] for c in data["cases"]] == [
        f"{s['agent']}/{s['eval_set_id']}/{c['eval_id']}" for s in results["eval_sets"] for c in s["cases"]
    ]
    wrong = expand_case(next(c for c in data["cases"] if c["eval_id"] == "roll_12_wrong_golden"), data["texts"])
    assert wrong["expected"][0]["tools"] == [{"name": "roll_die", "args": {"sides": 10}}]
    assert wrong["runs"][0]["turns"][0]["tools"] == [{"name": "roll_die", "args": {"sides": 12}}]
    assert f"`{page.as_posix()}`" in summary.read_text() and "adk-eval-gate view" in summary.read_text()
    assert "html-report-path<<" in outputs.read_text() and str(page) in outputs.read_text()


def test_the_comment_links_the_run_artifacts():
    current, baseline = suite()
    comparison = compared(current, baseline)
    run = "https://github.com/o/r/actions/runs/42"
    markdown = render_report(comparison, current, {}, run_url=run, report_url=f"{run}#artifacts")
    assert f"[HTML report (report.html)]({run}#artifacts)" in markdown
    assert "HTML report" not in render_report(comparison, current, {})


def _folder(tmp_path):
    current, baseline = suite()
    (tmp_path / "results.json").write_text(current.model_dump_json())
    (tmp_path / "comparison.json").write_text(compared(current, baseline).model_dump_json())
    return tmp_path


def _page_in(out: str):
    """The page `view` says it rendered (a new private folder each time, never the artifact's)."""
    from pathlib import Path

    return Path(next(line for line in out.splitlines() if line.startswith("report: ")).removeprefix("report: "))


def test_view_renders_the_page_and_prints_where_it_is_without_a_browser(tmp_path, monkeypatch, capsys):
    folder = _folder(tmp_path)
    for name in ("DISPLAY", "WAYLAND_DISPLAY", "BROWSER"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(webbrowser, "open", lambda url: pytest.fail("no browser should be started"))
    assert main(["view", str(folder)]) == 0
    out = capsys.readouterr().out
    page = _page_in(out)
    assert page.is_file() and page.resolve().as_uri() in out and folder not in page.parents
    assert not (folder / "report.html").exists(), "view wrote into the artifact's folder"
    assert embedded_data(page.read_text(encoding="utf-8"))["verdict"]["state"] in ("pass", "fail")


def test_view_opens_a_page_it_rendered_afresh_every_time(tmp_path, monkeypatch, capsys):
    folder = _folder(tmp_path)
    opened = []
    monkeypatch.setenv("DISPLAY", ":0")
    monkeypatch.setattr(webbrowser, "open", lambda url: opened.append(url) or True)
    assert main(["view", str(folder / "results.json")]) == 0
    first = _page_in(capsys.readouterr().out)
    assert opened == [first.resolve().as_uri()]
    assert main(["view", str(folder)]) == 0
    second = _page_in(capsys.readouterr().out)
    assert second != first and opened[-1] == second.resolve().as_uri()
    assert oct(second.parent.stat().st_mode & 0o777) == "0o700"


def test_view_with_the_config_shows_the_expected_turns(example, tmp_path, capsys):
    main(
        [
            "run",
            "--config",
            str(example / "eval-gate.yml"),
            "--output",
            str(tmp_path / "results.json"),
            "--quiet",
        ]
    )
    capsys.readouterr()
    assert main(["view", str(tmp_path), "--no-open", "--config", str(example / "eval-gate.yml")]) == 0
    out = capsys.readouterr().out
    page = _page_in(out)
    data = embedded_data(page.read_text(encoding="utf-8"))
    assert all(c["expected"] for c in data["cases"])
    assert page.resolve().as_uri() in out


def test_view_of_nothing_is_one_line(tmp_path, capsys):
    assert_bad_input(["view", str(tmp_path / "missing")], tmp_path, capsys, "does not exist")
    (tmp_path / "empty").mkdir()
    assert_bad_input(["view", str(tmp_path / "empty")], tmp_path, capsys, "holds no results.json")


def test_a_case_without_runs_still_renders():
    current = results_file({("a", "s"): [Case("only", {TRAJECTORY: [[1.0]]})]})
    current.eval_sets[0].cases[0].runs[0].actual_invocations = [{"not": "an invocation"}]
    data = report_data(current)
    (case,) = data["cases"]
    assert expand_case(case, data["texts"])["runs"][0]["turns"][0]["response"].startswith(
        "(this turn could not be read"
    )
