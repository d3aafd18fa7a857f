"""report.html without a browser: the embedded data is safe inside <script> and round-trips, the policy hashes are
the page's own, `ci` writes the page beside report.md and says where it is, the comment links it, and
`adk-eval-gate view` renders and opens it (or prints where it is)."""

from __future__ import annotations

import base64
import hashlib
import json
import re

from adk_eval_gate.report.html import DATA_ID, embed_json, embedded_data, render_html, report_data
from adk_eval_gate.report.html_cases import expand_case
from adk_eval_gate.report.markdown import CommentPlace, render_report
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
        "pass_k",
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


def test_the_comment_links_the_run_artifacts():
    current, baseline = suite()
    comparison = compared(current, baseline)
    run = "https://github.com/o/r/actions/runs/42"
    markdown = render_report(comparison, current, {}, CommentPlace(run_url=run, report_url=f"{run}#artifacts"))
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
