"""An agent whose Gemini model has no credentials stops `ci` with one line before any case."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


def test_ci_stops_with_one_line_before_any_case(example: Path) -> None:
    agent = example / "hello_world" / "agent.py"
    text = agent.read_text()
    assert "model=ScriptedLlm()" in text
    agent.write_text(text.replace("model=ScriptedLlm()", 'model="gemini-2.5-flash"'))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "INPUT_", "GOOGLE_", "GEMINI_"))}
    done = subprocess.run(
        [sys.executable, "-m", "adk_eval_gate", "ci", "--no-comment", "--output-dir", "out"],
        cwd=example,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 2, done.stderr[-2000:]
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, lines[:5]
    assert "gemini-2.5-flash calls Gemini, and no credentials are set" in lines[0]
    assert "docs/try-it-offline.md" in lines[0] and "Traceback" not in done.stderr + done.stdout
