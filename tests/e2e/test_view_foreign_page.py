"""`view` never opens a page it did not render: a downloaded artifact (a fork's) can carry a report.html of its
own, newer than its results.json, whose script calls home. The page opened is always ours, rendered from the
validated data into a fresh private folder; in a real browser the foreign page's request is never made."""

from __future__ import annotations

import os
import threading
import time
import webbrowser
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import ClassVar

import pytest

from adk_eval_gate.commands.main import main
from adk_eval_gate.report.html import DATA_ID, embedded_data
from tests.support.browser import chromium, open_page
from tests.support.hostile import assert_bad_input
from tests.support.loopback import LoopbackServer, reply
from tests.support.report_data import compared
from tests.unit.report.test_report_browser import suite

MARKER = "foreign-page-marker"


def _hostile_artifact(folder: Path, home: str) -> Path:
    """results.json and comparison.json as a run wrote them, and a newer report.html that is not ours."""
    current, baseline = suite()
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "results.json").write_text(current.model_dump_json())
    (folder / "comparison.json").write_text(compared(current, baseline).model_dump_json())
    page = folder / "report.html"
    page.write_text(
        f"<!doctype html><title>{MARKER}</title><script>fetch('{home}/script');</script>"
        f"<img src='{home}/image'><p>{MARKER}</p>",
        encoding="utf-8",
    )
    later = time.time() + 3600
    os.utime(page, (later, later))
    return page


def _opened(argv: list[str], monkeypatch, capsys) -> Path:
    opened: list[str] = []
    monkeypatch.setenv("DISPLAY", ":0")
    monkeypatch.setattr(webbrowser, "open", lambda url: opened.append(url) or True)
    capsys.readouterr()
    assert main(argv) == 0
    capsys.readouterr()
    (url,) = opened
    return Path(url.removeprefix("file://"))


@pytest.mark.parametrize("given", ["folder", "report.html"])
def test_a_newer_foreign_report_html_is_never_opened(given, tmp_path, monkeypatch, capsys):
    folder = tmp_path / "artifact"
    foreign = _hostile_artifact(folder, "http://127.0.0.1:9")
    before = foreign.read_bytes()
    page = _opened(["view", str(folder if given == "folder" else foreign)], monkeypatch, capsys)
    assert page != foreign.resolve() and folder.resolve() not in page.parents
    text = page.read_text(encoding="utf-8")
    assert MARKER not in text and DATA_ID in text and "Content-Security-Policy" in text
    assert embedded_data(text)["verdict"]["state"] in ("pass", "fail")
    assert foreign.read_bytes() == before, "the artifact's folder is left as it was"


def test_a_report_html_with_no_data_beside_it_is_refused_in_one_line(tmp_path, capsys):
    lone = tmp_path / "downloads" / "report.html"
    lone.parent.mkdir()
    lone.write_text(f"<script>{MARKER}</script>", encoding="utf-8")
    assert_bad_input(["view", str(lone)], tmp_path, capsys, "report.html", "did not render", "results.json")


def test_a_comparison_file_that_is_not_one_is_refused_before_any_page_is_written(tmp_path, capsys):
    folder = tmp_path / "artifact"
    _hostile_artifact(folder, "http://127.0.0.1:9")
    (folder / "comparison.json").write_text('{"verdict": "pass", "score": NaN}')
    assert_bad_input(["view", str(folder)], tmp_path, capsys, "comparison.json")


class _Home(BaseHTTPRequestHandler):
    hits: ClassVar[list[str]] = []
    lock = threading.Lock()

    def do_GET(self):
        with self.lock:
            self.hits.append(self.path)
        reply(self, 200, b"", "text/plain")

    def log_message(self, *args):
        pass


def test_in_a_browser_the_foreign_pages_request_is_never_made(tmp_path, monkeypatch, capsys):
    home = LoopbackServer(_Home)
    try:
        folder = tmp_path / "artifact"
        foreign = _hostile_artifact(folder, home.url)
        page = _opened(["view", str(folder)], monkeypatch, capsys)
        with chromium() as session:
            open_page(session, page)
            assert session.execute_script("return document.getElementById(arguments[0]) !== null", DATA_ID)
            time.sleep(0.5)
            assert _Home.hits == [], f"our page made requests: {_Home.hits}"
            # The control: the foreign page does call home when opened, so the assertion above can fail.
            session.get(foreign.resolve().as_uri())
            deadline = time.monotonic() + 10
            while not _Home.hits and time.monotonic() < deadline:
                time.sleep(0.05)
            assert _Home.hits, "the foreign page should have made its request"
    finally:
        home.close()
