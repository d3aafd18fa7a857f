"""Which run a file of an output folder belongs to, and what `remove_stale` takes away (report/run_marks.py)."""

from __future__ import annotations

import json

from adk_eval_gate.report.run_marks import Mark, mark_html, mark_junit, mark_markdown, mark_of, remove_stale


def test_each_mark_is_read_back(tmp_path):
    (tmp_path / "report.md").write_text(mark_markdown("## ✅ adk-eval-gate: passed\n", "local.ab12"))
    (tmp_path / "report.html").write_text(mark_html('<head>\n<meta charset="utf-8">\n</head>', "7.1.cd"))
    (tmp_path / "junit.xml").write_text(mark_junit('<testsuites name="adk-eval-gate"></testsuites>', "local.ef"))
    (tmp_path / "comparison.json").write_text(json.dumps({"verdict": "pass", "run_id": "local.ab12"}))
    assert [mark_of(tmp_path / n) for n in ("report.md", "report.html", "junit.xml", "comparison.json")] == [
        Mark(True, "local.ab12"),
        Mark(True, "7.1.cd"),
        Mark(True, "local.ef"),
        Mark(True, "local.ab12"),
    ]


def test_only_our_files_of_another_run_are_removed(tmp_path):
    (tmp_path / "report.md").write_text("## ❌ adk-eval-gate: failed\n")  # an earlier version's: no mark, still ours
    (tmp_path / "report.html").write_text(mark_html('<meta charset="utf-8">\n', "local.same"))  # this run's
    (tmp_path / "junit.xml").write_text('<testsuites name="pytest"/>')  # someone else's
    (tmp_path / "comparison.json").write_text(json.dumps({"verdict": "fail"}))  # ours, of no named run
    assert remove_stale(tmp_path, "local.same") == ["report.md", "comparison.json"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["junit.xml", "report.html"]


def test_a_users_notes_mentioning_the_tool_are_not_ours(tmp_path):
    (tmp_path / "report.md").write_text("# Notes\n\nadk-eval-gate writes a report.md too.\n")
    assert mark_of(tmp_path / "report.md") == Mark(False, None)
    assert remove_stale(tmp_path, "local.x") == []
