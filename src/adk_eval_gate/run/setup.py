"""The agent's own dependencies, installed in the Action's container before anything runs (`setup:`)."""

from __future__ import annotations

import shlex
import subprocess
import sys
from pathlib import Path

from adk_eval_gate.core.errors import InputError
from adk_eval_gate.core.foreign_lines import forward_lines
from adk_eval_gate.core.redaction import child_env
from adk_eval_gate.core.sealed import check_sealed

# How long a finished setup command's output is still read: what its shell printed is in the pipe by then.
DRAIN_SECONDS = 2.0


def _write_out(text: str) -> None:
    sys.stdout.write(text)
    sys.stdout.flush()


def run_setup(commands: list[str], cwd: Path) -> None:
    """The agent's own dependencies (e.g. `pip install -r requirements.txt`), folded into one log group.

    They come from the pull request, so they get none of GitHub's tokens (core/redaction.py `child_env`), and
    their output reaches the log through our (redacting) stdout."""
    env = child_env()
    for command in commands:
        print(f"::group::setup: {command}", flush=True)
        process = subprocess.Popen(
            command,
            shell=True,
            cwd=cwd,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
        )
        assert process.stdout is not None
        # Lines reach the log made inert (never a workflow command of ours: core/foreign_lines.py), masked and
        # stripped by our stdout. The command is over when its shell exits: a process it left running may hold the
        # pipe open for ever (a daemon), so the run goes on after a short drain rather than wait for it; the fence
        # ends such a process before the run reports (core/command_files.py). The reader owns the pipe and closes
        # it at its end: closing it here would wait on a read that may never return.
        reader = forward_lines(process.stdout, _write_out)
        returncode = process.wait()
        reader.join(timeout=DRAIN_SECONDS)
        sys.stdout.flush()
        print("::endgroup::", flush=True)
        if returncode != 0:
            raise InputError(
                None, "setup", f"`{shlex.quote(command)}` exited with status {returncode}", "fix the setup command"
            )
    check_sealed()  # what setup changed in the gate's own files is refused before anything reads them
