"""`make demo`'s script shows the main moments: a regressing pull request fails the gate, with the comment and
the page written and named. (The Makefile target adds only the install.)"""

from __future__ import annotations

import subprocess
import sys

from tests.conftest import ROOT


def test_the_demo_gates_a_regressing_pull_request() -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "demo.py")], cwd=ROOT, capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, (done.stdout[-3000:], done.stderr[-3000:])
    out = ROOT / "out" / "demo" / "adk-eval-gate-out"
    comment = (out / "report.md").read_text()
    assert comment.startswith("## ❌"), comment[:300]  # the headline says the gate failed
    assert "regress" in comment.splitlines()[2].lower() or "regress" in comment[:600].lower()
    assert (out / "report.html").is_file()
    for shown in ("the comment (markdown, as posted)", "the page (open in a browser)", "exit code 1"):
        assert shown in done.stdout
