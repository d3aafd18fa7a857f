"""The agent's own dependencies, installed in the Action's container before anything runs (`setup:`)."""

from __future__ import annotations

import shlex
import subprocess
import sys
from pathlib import Path

from adk_eval_gate.core.errors import InputError
from adk_eval_gate.core.foreign_lines import inert
from adk_eval_gate.core.redaction import child_env
from adk_eval_gate.core.sealed import check_sealed


def run_setup(commands: list[str], cwd: Path) -> None:
    """The agent's own dependencies (e.g. `pip install -r requirements.txt`), folded into one log group.

    They come from the pull request, so they get none of GitHub's tokens (core/redaction.py `child_env`), and
    their output reaches the log through our (redacting) stdout."""
    env = child_env()
    for command in commands:
        print(f"::group::setup: {command}", flush=True)
        with subprocess.Popen(
            command,
            shell=True,
            cwd=cwd,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            text=True,
            errors="replace",
        ) as process:
            assert process.stdout is not None
            for line in process.stdout:
                sys.stdout.write(inert(line))  # never a workflow command of ours (core/foreign_lines.py)
            returncode = process.wait()
        sys.stdout.flush()
        print("::endgroup::", flush=True)
        if returncode != 0:
            raise InputError(
                None, "setup", f"`{shlex.quote(command)}` exited with status {returncode}", "fix the setup command"
            )
    check_sealed()  # what setup changed in the gate's own files is refused before anything reads them
