"""A setup command that leaves a process holding its output open does not hold the run (run/setup.py).

The command's shell exits; a daemon it started keeps the pipe's write end and writes nothing for a long time. The
setup step is over when the shell is: its printed lines are in the log, and the run goes on within the drain.
"""

from __future__ import annotations

import subprocess
import sys
import time

from adk_eval_gate.run.setup import DRAIN_SECONDS, run_setup


def test_a_daemon_holding_setups_output_does_not_hold_the_run(tmp_path, capfd):
    daemon = tmp_path / "daemon.py"
    daemon.write_text("import time\ntime.sleep(60)\n")
    command = f"echo installed; {sys.executable} {daemon} & echo started"
    began = time.monotonic()
    try:
        run_setup([command], tmp_path)
        took = time.monotonic() - began
    finally:
        subprocess.run(["pkill", "-f", str(daemon)], check=False)
    out = capfd.readouterr().out
    assert "installed" in out and "started" in out
    assert took < DRAIN_SECONDS + 5, f"setup held the run for {took:.1f} s"


def test_setups_lines_are_never_workflow_commands(tmp_path, capfd):
    run_setup(["echo '::set-output name=passed::true'; echo '  ::stop-commands::x'; echo ok"], tmp_path)
    lines = capfd.readouterr().out.splitlines()
    assert "ok" in lines
    assert not [line for line in lines if line.strip().startswith(("::set-output", "::stop-commands"))]
