"""Issue #34, items 4–6, end to end as GitHub runs the Action: a pull request's agents-cli code metrics put the
job's API key past the 300-character cut of a crash line, split it with an SGR code between bidi, NUL and DEL
characters, and answer scores that are finite but huge (1.7e308). No piece of the key of 4 characters or more
reaches a file we write, a request to GitHub or the job log; the log carries no control or bidi character; the
huge scores are `error` rows, never a traceback.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from tests.integration.core.test_secrets import run_action
from tests.support.fake_github import FakeGitHub
from tests.support.leaks import readable
from tests.support.paths import ROOT

# Random letters: none of its 4-character pieces occurs in anything we write on our own.
KEY = "AIzaQxZvWqJkXyPfQzVbNmKjHgQwZxCvBnMkLpRt"
ESCAPED = KEY[:4] + "\x1b[0m" + KEY[4:]  # an SGR code splits it: masked only once stripped
HOSTILE = "\x1b[2K\x1b]8;;http://x\x07\u202eevil\u202c\u2066\x00\x7f\x9b31m"
# Every character that must not reach the job log: C0 but tab and newline, DEL, C1, bidi marks and controls.
CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")

METRICS = """
  - name: crashes
    custom_function: |
      def evaluate(instance):
          import os, sys
          sys.stderr.write("boom " + "x" * 275 + os.environ["GOOGLE_API_KEY"] + " and more\\n")
          sys.stderr.flush()
          os._exit(3)
  - name: raises
    custom_function: |
      def evaluate(instance):
          import os
          key = os.environ["GOOGLE_API_KEY"]
          raise RuntimeError("y" * 280 + key[:4] + "\\x1b[0m" + key[4:] + HOSTILE)
  - name: huge
    custom_function: |
      def evaluate(instance):
          return 1.7e308
""".replace("HOSTILE", repr(HOSTILE))


def pieces(secret: str, shortest: int = 4) -> set[str]:
    return {p for k in range(shortest, len(secret) + 1) for p in (secret[:k], secret[-k:])}


def found(text: str) -> list[str]:
    text = CONTROL.sub("", text.replace("\u200b", ""))  # what a terminal or a reader shows
    return sorted((p for p in pieces(KEY) if p in text), key=len, reverse=True)[:3]


@pytest.fixture
def hostile_project(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    shutil.copytree(
        ROOT / "examples" / "agents_cli", repo, ignore=shutil.ignore_patterns("__pycache__", "baseline", ".adk")
    )
    config = repo / "tests" / "eval" / "eval_config.yaml"
    text = config.read_text()
    text = text.replace("  - response_length\n", "  - response_length\n  - crashes\n  - raises\n  - huge\n")
    config.write_text(text + METRICS)
    (repo / "eval-gate.yml").write_text(
        "baseline: {store: none}\ngate: {fail_on: [threshold, error]}\nagents:\n  - name: travel_helper\n"
        "    target: {kind: adk, agent: app}\n    evalsets: [tests/eval/datasets/*-dataset.json]\n"
        "    eval_config: tests/eval/eval_config.yaml\n"
    )
    event = {
        "number": 7,
        "pull_request": {
            "number": 7,
            "head": {"sha": "c" * 40, "ref": "f"},
            "base": {"sha": "b" * 40, "ref": "main"},
            "labels": [],
        },
        "repository": {"full_name": "o/r", "default_branch": "main"},
    }
    (repo / "event.json").write_text(json.dumps(event))
    return repo


def test_hostile_code_metrics_leave_no_key_piece_no_control_character_and_no_traceback(hostile_project):
    with FakeGitHub() as fake:
        done = run_action(hostile_project, fake, GOOGLE_API_KEY=KEY)
        bodies = [json.dumps(r["body"], ensure_ascii=False) for r in fake.state.requests if r["body"] is not None]
    log = done.stdout + done.stderr
    assert done.returncode == 1, log[-3000:]  # the metrics' errors gate, nothing crashed
    assert "Traceback" not in log and "OverflowError" not in log, log[-3000:]

    out = hostile_project / "adk-eval-gate-out"
    names = {"results.json", "comparison.json", "report.md", "report.html", "junit.xml"}
    assert names <= {p.name for p in out.iterdir()}
    written = {p.name: readable(p) for p in out.iterdir() if p.is_file()}
    written |= {n: (hostile_project / n).read_text() for n in ("summary.md", "output.txt")}
    surfaces = {**written, "log": log, **{f"request {i}": b for i, b in enumerate(bodies)}}
    assert {name: f for name, text in surfaces.items() if (f := found(text))} == {}

    # The job log, the step outputs and the summary carry no control or bidi character.
    for name in ("log", "output.txt", "summary.md"):
        assert not CONTROL.search(surfaces[name]), (name, CONTROL.findall(surfaces[name])[:5])

    # Each attack did reach its cut: the crash line was cut, the raise kept its text, the huge score is an error.
    results = json.loads((out / "results.json").read_text())
    metrics = [c["metrics"] for s in results["eval_sets"] for c in s["cases"]]
    crashed = [m["crashes"]["runs"][0]["reason"] for m in metrics]
    assert all("exited with status 3" in r and "***" in r for r in crashed), crashed[:1]
    raised = [m["raises"]["runs"][0]["reason"] for m in metrics]
    assert all("***" in r and "evil" in r for r in raised), raised[:1]
    huge = [m["huge"] for m in metrics]
    assert all(h["status"] == "error" and h["score"] is None for h in huge), huge[:1]
    assert all("1.7e+308" in h["runs"][0]["reason"] and "1e+15" in h["runs"][0]["reason"] for h in huge)
    assert "::error" in done.stderr + done.stdout  # the annotations that carried the text were printed
