"""report.html written by `ci` and opened by `view`, on the example agent's run."""

from __future__ import annotations

import json
import webbrowser

import pytest

from adk_eval_gate.commands.main import main
from adk_eval_gate.report.html import embedded_data
from adk_eval_gate.report.html_cases import expand_case
from tests.unit.report.test_report_html import _folder, _page_in


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
