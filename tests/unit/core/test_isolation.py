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


@linux
def test_tokens_leave_every_environment_and_the_child_cannot_read_the_holder():
    images, seen = probe()
    assert images == [] and seen["problems"] == []
    assert seen["held"] == {"GITHUB_TOKEN": TOKEN, "ACTIONS_RUNTIME_TOKEN": TOKEN + "r"}
    assert seen["environ"] == []
    assert TOKEN not in seen["initial"] and "KEPT=ordinary" in seen["initial"]  # overwritten in place, nothing else
    assert TOKEN not in seen["child"] and "env=\n" in seen["child"]
    assert "/environ: Permission denied" in seen["refused"] and "/mem: Permission denied" in seen["refused"]
    status = dict(line.split(":\t") for line in seen["child"].splitlines() if ":\t" in line)
    assert status["NoNewPrivs"] == "1"
    if os.geteuid() == 0:
        assert not int(status["CapBnd"], 16) >> 19 & 1  # CAP_SYS_PTRACE: the child cannot read past the above


@linux
def test_where_the_initial_environment_cannot_be_overwritten_the_command_starts_again_clean():
    images, seen = probe("fallback")
    assert images == ["image", "image"]  # started once more, and only once
    assert seen["held"] == {"GITHUB_TOKEN": TOKEN, "ACTIONS_RUNTIME_TOKEN": TOKEN + "r"}  # handed over on a pipe
    assert TOKEN not in seen["initial"]
    assert TOKEN not in seen["child"] and "Permission denied" in seen["refused"]


def test_a_command_called_in_process_holds_the_tokens_for_the_call_only(monkeypatch):
    monkeypatch.setenv("GITHUB_TOKEN", TOKEN)
    monkeypatch.setenv("GOOGLE_API_KEY", "AIza-not-a-github-token")
    with holding():
        assert "GITHUB_TOKEN" not in os.environ and held()["GITHUB_TOKEN"] == TOKEN
        assert redact(f"token {TOKEN}") == "token ***"  # held, and still masked
        assert "GITHUB_TOKEN" not in child_env() and child_env()["GOOGLE_API_KEY"] == "AIza-not-a-github-token"
        assert child_env(["GITHUB_TOKEN"])["GITHUB_TOKEN"] == TOKEN  # `pass_env` names it: handed from the holder
        # an `http` target's `headers_from_env` naming it reads it from the holder too
        assert HttpTarget._resolve_headers({"Authorization": "GITHUB_TOKEN"}) == {"Authorization": TOKEN}
    assert os.environ["GITHUB_TOKEN"] == TOKEN and "GITHUB_TOKEN" not in held()


@linux
@pytest.mark.skipif(not CONSOLE.exists(), reason="the console script is installed with the package")
@pytest.mark.parametrize(
    ("ci", "command", "warned"),
    [
        (True, "run --config missing.yml", True),
        (False, "run --config missing.yml", False),
        (True, "schema results", False),
    ],
    ids=["ci-run", "laptop-run", "ci-no-pull-request-code"],
)
def test_a_parent_shell_holding_the_token_is_named_in_one_warning(tmp_path, ci, command, warned):
    env = {k: v for k, v in os.environ.items() if k not in ("CI", "GITHUB_ACTIONS")}
    env |= {"GITHUB_TOKEN": TOKEN, **({"CI": "true"} if ci else {})}
    # `; true`: the shell stays, as a step's shell does, rather than exec'ing the command in its place
    done = subprocess.run(
        ["sh", "-c", f"{CONSOLE} {command} > /dev/null; true"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    warnings = [line for line in done.stderr.splitlines() if line.startswith("warning:")]
    assert TOKEN not in done.stderr
    if warned:
        assert len(warnings) == 1, done.stderr
        assert (
            warnings[0].startswith("warning: sh (pid ") and "holds GITHUB_TOKEN in its own environment" in warnings[0]
        )
        assert "`github-token` input" in warnings[0]
    else:
        assert warnings == [], done.stderr
    if command.startswith("run"):  # the command itself went on as usual
        assert "missing.yml" in done.stderr.splitlines()[-1]


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
