"""GitHub's tokens held in memory, out of every environment, and the process holding them out of its children's
reach (core/held_tokens.py, core/isolation.py). Real processes throughout: what a child can read is read by one.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from adk_eval_gate.core.errors import InputError
from adk_eval_gate.core.held_tokens import held, holding
from adk_eval_gate.core.redaction import child_env, redact
from adk_eval_gate.targets.http import HttpTarget

linux = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="prctl and /proc are Linux's")
TOKEN = "ghs_" + "T0ken" * 7 + "x"
CONSOLE = Path(sys.executable).parent / "adk-eval-gate"

# Isolates itself, then has a shell child report what it can read of its parent and of itself.
PROBE = """
import json, os, subprocess, sys
from adk_eval_gate.core import isolation
from adk_eval_gate.core.held_tokens import held
if len(sys.argv) > 1:  # the fallback: as if the initial environment could not be overwritten in place
    isolation._wipe_initial_environment = lambda: False
    print("image", flush=True)
problems = isolation.isolate_process()
child = subprocess.run(
    ["sh", "-c", "cat /proc/$PPID/environ; cat /proc/$PPID/mem; echo; echo env=$GITHUB_TOKEN;"
     "grep -E '^(NoNewPrivs|CapBnd)' /proc/self/status"],
    capture_output=True, text=True)
print(json.dumps({"problems": problems, "held": dict(held()), "environ": [k for k in os.environ if "TOKEN" in k],
                  "initial": open("/proc/self/environ", "rb").read().decode(errors="replace"),
                  "child": child.stdout, "refused": child.stderr}))
"""


def probe(*argv: str) -> tuple[list[str], dict]:
    env = {**os.environ, "GITHUB_TOKEN": TOKEN, "ACTIONS_RUNTIME_TOKEN": TOKEN + "r", "KEPT": "ordinary"}
    done = subprocess.run(
        [sys.executable, "-c", PROBE, *argv], env=env, capture_output=True, text=True, timeout=60, check=True
    )
    *before, last = done.stdout.splitlines()
    return before, json.loads(last)


def test_a_command_called_in_process_holds_the_tokens_for_the_call_only(monkeypatch):
    monkeypatch.setenv("GITHUB_TOKEN", TOKEN)
    monkeypatch.setenv("GOOGLE_API_KEY", "AIza-not-a-github-token")
    with holding():
        assert "GITHUB_TOKEN" not in os.environ and held()["GITHUB_TOKEN"] == TOKEN
        assert redact(f"token {TOKEN}") == "token ***"  # held, and still masked
        assert "GITHUB_TOKEN" not in child_env() and child_env()["GOOGLE_API_KEY"] == "AIza-not-a-github-token"
        # no config reaches it by name: an `http` target's `headers_from_env` naming it is refused, not resolved
        with pytest.raises(InputError, match="never sent"):
            HttpTarget._resolve_headers({"Authorization": "GITHUB_TOKEN"})
    assert os.environ["GITHUB_TOKEN"] == TOKEN and "GITHUB_TOKEN" not in held()


HOSTILE_TEMPLATE = "{{ cycler.__init__.__globals__.os.environ }}{{ lipsum.__globals__['os'].getpid() }}"


def test_a_report_template_override_cannot_reach_python_objects(example, tmp_path, capsys):
    """A template is the pull request's file rendered in the process that holds the token: sandboxed, a template
    that reaches for Python's internals is refused at once, by the one-line rule."""
    from tests.support.hostile import assert_bad_input

    (example / "templates").mkdir()
    (example / "templates" / "comment.md.j2").write_text(HOSTILE_TEMPLATE)
    config = example / "replay.yml"
    config.write_text(config.read_text() + "report: {templates: templates}\n")
    line = assert_bad_input(["validate", "--config", str(config)], example, capsys, "comment.md.j2", "unsafe")
    assert "environ" not in line.partition("unsafe")[2]


def test_a_judge_template_override_cannot_reach_python_objects(tmp_path):
    from jinja2.sandbox import SecurityError

    from adk_eval_gate.criteria.engine.prompts import environment

    (tmp_path / "final_response_match_v2.j2").write_text(HOSTILE_TEMPLATE)
    with pytest.raises(SecurityError):
        environment(tmp_path).get_template("final_response_match_v2.j2").render()


def test_a_template_override_reads_nothing_outside_its_folder(tmp_path):
    # `{% include %}` opens files by name: a link in the pull request's folder must not bring in a file of ours.
    from jinja2.sandbox import SecurityError

    from adk_eval_gate.criteria.engine.prompts import environment as judge_environment
    from adk_eval_gate.report.markdown import environment as report_environment

    secret = tmp_path / "outside" / "credentials"
    secret.parent.mkdir()
    secret.write_text("ghs_outside_the_folder")
    folder = tmp_path / "templates"
    folder.mkdir()
    (folder / "stolen.j2").symlink_to(secret)
    (folder / "comment.md.j2").write_text('{% include "stolen.j2" %}')
    (folder / "final_response_match_v2.j2").write_text('{% include "stolen.j2" %}')
    (folder / "mine.j2").write_text("kept")
    (folder / "ok.md.j2").write_text('{% include "mine.j2" %}')
    with pytest.raises(SecurityError, match="outside its folder"):
        report_environment(folder).get_template("comment.md.j2").render()
    with pytest.raises(SecurityError, match="outside its folder"):
        judge_environment(folder).get_template("final_response_match_v2.j2").render()
    assert report_environment(folder).get_template("ok.md.j2").render() == "kept"
