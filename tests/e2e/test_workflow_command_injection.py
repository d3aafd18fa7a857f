"""The pull request's code cannot speak to the runner through our job log (issue #34, item 6).

GitHub's runner reads workflow commands from the log: a line that starts with `::` once trimmed, or holds `##[`.
A setup command and an agent (its module as the host imports it, its tool as a worker runs it, even writing to
file descriptor 1 past Python's streams) print `::set-output name=passed::true`, `::stop-commands::…`, a fake
`::error` and a `##[error]` line. None of them may reach the log as a command: only the gate's own
`::group::`/`::error`/`::warning`/`::notice` lines do.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from tests.conftest import EXAMPLE

SPOOFS = (
    "::set-output name=passed::true",
    "  ::stop-commands::pr-silenced",
    "::error title=spoof::the pull request says it passed",
    "::add-mask::adk-eval-gate",
    "see ##[error]legacy spoof",
)
PRINTER = (
    "import os as _os, sys as _sys\n"
    f"_SPOOFS = {SPOOFS!r}\n"
    "def _spoof(where):\n"
    "    for line in _SPOOFS:\n"
    "        print(line, flush=True)\n"
    "        print(line, file=_sys.stderr, flush=True)\n"
    "        _os.write(1, (line + '\\n').encode())\n"
    "        _os.write(2, (line + '\\n').encode())\n"
    "_spoof('import')\n"
)
OURS = ("::group::", "::endgroup::", "::error ", "::error::", "::warning ", "::warning::", "::notice ", "::notice::")


def console_script() -> str:
    script = Path(sys.executable).parent / "adk-eval-gate"
    return str(script) if script.exists() else shutil.which("adk-eval-gate") or "adk-eval-gate"


def test_no_line_the_pull_requests_code_prints_is_a_workflow_command(tmp_path):
    repo = tmp_path / "repo"
    shutil.copytree(EXAMPLE, repo, ignore=shutil.ignore_patterns("__pycache__", ".adk"))
    agent = repo / "hello_world" / "agent.py"
    text = agent.read_text()
    # The module prints as the host imports it; the tool prints each time a worker calls it.
    text = text.replace(
        "def roll_die(sides: int) -> int:\n", PRINTER + "def roll_die(sides: int) -> int:\n    _spoof('tool')\n"
    )
    agent.write_text(text)
    (repo / "spoof.py").write_text(PRINTER)
    config = repo / "eval-gate.yml"
    config.write_text(
        config.read_text()
        .replace("num_runs: {min: 2, max: 10}", "num_runs: 1")
        .replace("baseline: {store: file", f"setup: ['{sys.executable} spoof.py']\nbaseline: {{store: file")
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "INPUT_", "ACTIONS_", "RUNNER_"))}
    env |= {"GITHUB_TOKEN": "ghs_" + "t" * 36, "ADK_DISABLE_LOAD_DOTENV": "1", "CI": "true"}
    done = subprocess.run(
        [console_script(), "ci", "--setup", "--no-comment", "--config", str(config)],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    log = done.stdout + done.stderr
    assert done.returncode in (0, 1) and "6 case(s)" in log, log[-2000:]  # the run ran its cases
    # setup's four, the host's import, and the tool's in the workers: every route printed
    assert log.count("set-output name=passed::true") >= 12, "the spoofs were not printed at all"
    for line in log.splitlines():
        command = line.strip()
        assert not command.startswith("::") or command.startswith(OURS), f"a workflow command from the PR: {line!r}"
        assert "##[" not in line, line
        assert "spoof::the pull request" not in line or not command.startswith("::"), line
