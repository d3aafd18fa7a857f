"""`make screenshots`: the README's pictures, made from the current code — the pull-request comment of `make demo`'s
regressing pull request rendered by GitHub's own markdown renderer (cmarkgfm), and its report.html — each
photographed in headless Chromium.

    python tools/screenshots.py     # writes docs/pr-comment.png and docs/report-html.png
"""

from __future__ import annotations

import html
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import cmarkgfm

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "out" / "demo" / "adk-eval-gate-out"
# github.com's comment box, closely enough for a picture: its font stack, borders and table style.
STYLE = """body{font-family:-apple-system,Segoe UI,Helvetica,Arial,sans-serif;font-size:14px;line-height:1.5;
color:#1f2328;margin:0;padding:16px;background:#fff}.box{max-width:880px;padding:16px 24px;border:1px solid #d1d9e0;
border-radius:6px}table{border-collapse:collapse;margin:8px 0;display:block;overflow:auto}th,td{border:1px solid
#d1d9e0;padding:4px 10px}th{background:#f6f8fa}code,pre{font-family:ui-monospace,Menlo,monospace;font-size:12px;
background:#f6f8fa}pre{padding:10px;border-radius:6px}details{margin:6px 0}summary{cursor:pointer;font-weight:600}
blockquote{color:#59636e;border-left:3px solid #d1d9e0;margin:0;padding-left:10px}h2{font-size:20px}"""
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
)


def _photograph(page: Path, out: Path, width: int) -> None:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    profile = tempfile.mkdtemp(prefix="adk-eval-gate-shot-")
    options = webdriver.ChromeOptions()
    options.binary_location = shutil.which("chromium") or shutil.which("google-chrome") or "chromium"
    for flag in (*FLAGS, f"--user-data-dir={profile}", f"--window-size={width},1000"):
        options.add_argument(flag)
    session = webdriver.Chrome(service=Service(shutil.which("chromedriver") or "chromedriver"), options=options)
    try:
        session.get(page.resolve().as_uri())
        # as tall as the content (not the window), at most a screenful and a half
        bottom = "return Math.ceil(Math.max(...[...document.body.children].map(e => e.getBoundingClientRect().bottom)))"
        height = min(int(session.execute_script(bottom)) + 16, 2400)
        session.set_window_size(width, height)
        inner = int(session.execute_script("return window.innerHeight"))
        session.set_window_size(width, height + (height - inner))  # the window's frame, if headless has one
        session.save_screenshot(str(out))
    finally:
        session.quit()
        shutil.rmtree(profile, ignore_errors=True)


def main() -> int:
    # the demo's exit says whether the gate failed as it should; the pictures need only its files
    subprocess.run([sys.executable, str(ROOT / "tools" / "demo.py")], stdout=subprocess.DEVNULL)
    if not (DEMO / "report.md").is_file():
        raise SystemExit("screenshots: make demo wrote no report.md")
    markdown = (DEMO / "report.md").read_text(encoding="utf-8")
    # GitHub keeps <details>/<summary> (its sanitizer runs after the renderer): render them as it shows them
    body = cmarkgfm.github_flavored_markdown_to_html(markdown, options=cmarkgfm.cmark.Options.CMARK_OPT_UNSAFE)
    comment = DEMO / "comment.html"
    comment.write_text(
        f"<!doctype html><meta charset=utf-8><title>{html.escape('pull request comment')}</title>"
        f"<style>{STYLE}</style><div class=box>{body}</div>",
        encoding="utf-8",
    )
    _photograph(comment, ROOT / "docs" / "pr-comment.png", 940)
    _photograph(DEMO / "report.html", ROOT / "docs" / "report-html.png", 1280)
    print("wrote docs/pr-comment.png and docs/report-html.png")
    return 0


if __name__ == "__main__":
    sys.exit(main())
