"""Headless Chromium for the report.html tests (Debian's chromium and chromium-driver, driven by selenium).

Without them the browser tests skip and say why; with ADK_EVAL_GATE_BROWSER_TESTS=required (CI, after
`make container-tools` installed them) they fail instead, so a broken set-up can never pass as a skip.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
    "--window-size=1400,1000",
)


def _binaries() -> tuple[str, str] | str:
    try:
        import selenium  # noqa: F401
    except ImportError:
        return "selenium is not installed (pip install -e '.[dev]')"
    browser = next(filter(None, map(shutil.which, ("chromium", "chromium-browser", "google-chrome"))), None)
    driver = shutil.which("chromedriver")
    if not browser or not driver:
        return "no chromium/chromedriver (sudo make container-tools, or apt-get install chromium chromium-driver)"
    return browser, driver


def need_browser() -> tuple[str, str]:
    found = _binaries()
    if isinstance(found, str):
        if os.environ.get("ADK_EVAL_GATE_BROWSER_TESTS") == "required":
            pytest.fail(f"ADK_EVAL_GATE_BROWSER_TESTS=required but {found}")
        pytest.skip(found)
    return found


@contextmanager
def chromium() -> Iterator:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    browser, driver = need_browser()
    profile = tempfile.mkdtemp(prefix="adk-eval-gate-chromium-")
    options = webdriver.ChromeOptions()
    options.binary_location = browser
    for flag in (*FLAGS, f"--user-data-dir={profile}"):
        options.add_argument(flag)
    # The browser's console and every network event the page causes, read back by the tests.
    options.set_capability("goog:loggingPrefs", {"browser": "ALL", "performance": "ALL"})
    session = webdriver.Chrome(service=Service(driver), options=options)
    try:
        yield session
    finally:
        session.quit()
        shutil.rmtree(profile, ignore_errors=True)


def console_errors(session) -> list[str]:
    return [entry["message"] for entry in session.get_log("browser") if entry["level"] in ("SEVERE", "ERROR")]


def requested_urls(session, page: Path) -> list[str]:
    """Every URL the page (or anything it loaded) asked for, from the DevTools network events; the browser's own
    start page loads in the same log and is left out by the document that asked."""
    urls = []
    for entry in session.get_log("performance"):
        message = json.loads(entry["message"])["message"]
        if message["method"] == "Network.requestWillBeSent":
            params = message["params"]
            if params.get("documentURL") == page.resolve().as_uri():
                urls.append(params["request"]["url"])
    return urls


def open_page(session, path: Path, timeout: float = 20.0) -> None:
    from selenium.webdriver.support.ui import WebDriverWait

    session.get_log("performance")  # what the browser did before: its start page, not ours
    session.get_log("browser")
    session.get(path.resolve().as_uri())
    WebDriverWait(session, timeout).until(
        lambda s: s.execute_script("return document.documentElement.getAttribute('data-state')") in ("ready", "error")
    )
