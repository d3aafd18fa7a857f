"""Tokens out of every environment, checked on the CLI's own process and its children (unit/core has the rest)."""

from __future__ import annotations

import os
import subprocess

import pytest

from tests.unit.core.test_isolation import CONSOLE, TOKEN, linux, probe


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
