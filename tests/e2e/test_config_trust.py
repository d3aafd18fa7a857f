"""What reaches the pull request's processes is not the pull request's to decide, and the runner's command files
are ours alone (issue 34, items 1 and 3).

The pull request edits its own eval-gate.yml: a `setup_pass_env`, a `pass_env` or an `http` target's
`headers_from_env` naming a token there would hand its own code (or its own server) the token. Its setup, agents
and metrics run as our user and could write `$GITHUB_ENV` by path, and leave a daemon behind to write it later:
every write is put back and fails the run, and the daemon is ended first.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import ClassVar

import pytest

from tests.support.loopback import LoopbackServer, reply

TOKEN = "ghs_" + "T0kenForTheConfigTrustTests" + "0123456789"
RUNTIME = "eyJ0eXAiOiJKV1Qi.runtime-token-for-config-trust"

HOSTILE = r"""
import json, os, sys, time
kind = sys.argv[1]
out = os.environ["HOSTILE_OUT"]
with open(os.path.join(out, f"env-{kind}.json"), "w") as file:
    json.dump(dict(os.environ), file)
folder = os.path.join(os.environ["RUNNER_TEMP"], "_runner_file_commands")  # found by path, not by a variable
for name in sorted(os.listdir(folder)):
    with open(os.path.join(folder, name), "a") as file:
        file.write(f"PYTHONPATH=/tmp/evil-{kind}\n")
if kind == "setup" and os.fork() == 0:  # a daemon: double fork, new session, writes long after setup ended
    os.setsid()
    if os.fork() == 0:
        null = os.open(os.devnull, os.O_RDWR)
        for stream in (0, 1, 2):  # setup's output pipe closes: setup is over for whoever reads it
            os.dup2(null, stream)
        with open(os.path.join(out, "daemon.pid"), "w") as file:
            file.write(str(os.getpid()))
        time.sleep(float(os.environ.get("HOSTILE_DELAY", "60")))
        with open(os.path.join(folder, "set_env_0"), "a") as file:
            file.write("LD_PRELOAD=/tmp/evil.so\n")
        open(os.path.join(out, "daemon-wrote"), "w").close()
    os._exit(0)
if kind == "agent":
    json.load(sys.stdin)
    print(json.dumps({"turns": [{"response": "an answer"}]}))
"""

ORIGINAL = {
    "set_env_0": "KEPT_BY_AN_EARLIER_STEP=1\n",
    "add_path_0": "",
    "set_output_0": "earlier=output\n",
    "step_summary_0": "# an earlier summary\n",
    "save_state_0": "",
}
VARIABLES = {
    "GITHUB_ENV": "set_env_0",
    "GITHUB_PATH": "add_path_0",
    "GITHUB_OUTPUT": "set_output_0",
    "GITHUB_STEP_SUMMARY": "step_summary_0",
    "GITHUB_STATE": "save_state_0",
}


def console_script() -> str:
    script = Path(sys.executable).parent / "adk-eval-gate"
    return str(script) if script.exists() else shutil.which("adk-eval-gate") or "adk-eval-gate"


def write_repo(repo: Path, config: str) -> None:
    (repo / "evals").mkdir(parents=True)
    (repo / "out").mkdir()
    (repo / "hostile.py").write_text(HOSTILE)
    case = {
        "eval_id": "one",
        "conversation": [
            {
                "invocation_id": "one-1",
                "user_content": {"role": "user", "parts": [{"text": "hi"}]},
                "final_response": {"role": "model", "parts": [{"text": "an answer"}]},
            }
        ],
    }
    (repo / "evals" / "one.evalset.json").write_text(json.dumps({"eval_set_id": "one", "eval_cases": [case]}))
    (repo / "eval-gate.yml").write_text(config)


def agent_config(target: str, setup: str = "", extra: str = "") -> str:
    return (
        setup + extra + "baseline: {store: none}\n"
        "agents:\n"
        "  - name: a\n"
        f"    target: {target}\n"
        "    evalsets: [evals/one.evalset.json]\n"
        "    criteria: {response_match_score: 0.1}\n"
    )


def run_env(repo: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "INPUT_", "ACTIONS_", "RUNNER_"))}
    env.update(
        {
            "GITHUB_TOKEN": TOKEN,
            "ACTIONS_RUNTIME_TOKEN": RUNTIME,
            "HOSTILE_OUT": str(repo / "out"),
            "ADK_DISABLE_LOAD_DOTENV": "1",
            **extra,
        }
    )
    return env


def run(repo: Path, argv: list[str], env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run([console_script(), *argv], cwd=repo, env=env, capture_output=True, text=True, timeout=300)


class Recorder(BaseHTTPRequestHandler):
    seen: ClassVar[list[dict[str, str]]] = []

    def do_POST(self) -> None:
        Recorder.seen.append(dict(self.headers))
        reply(self, 500, b'{"error": "no"}')

    do_GET = do_POST

    def log_message(self, *args: object) -> None:
        pass


@pytest.mark.parametrize(
    ("headers", "extra_env", "said"),
    [
        ("{Authorization: GITHUB_TOKEN}", {}, "is one of GitHub's tokens"),
        ("{X-Runtime: actions_runtime_token}", {}, "is one of GitHub's tokens"),  # any spelling
        ("{Authorization: COPIED}", {"COPIED": TOKEN}, "is one of GitHub's tokens"),  # copied under another name
    ],
)
def test_an_http_targets_headers_never_carry_a_token_to_the_pull_requests_server(tmp_path, headers, extra_env, said):
    Recorder.seen = []
    server = LoopbackServer(Recorder)
    try:
        repo = tmp_path / "repo"
        write_repo(repo, agent_config(f"{{kind: http, url: '{server.url}', app_name: a, headers_from_env: {headers}}}"))
        done = run(repo, ["run", "--config", "eval-gate.yml", "--quiet"], run_env(repo, **extra_env))
    finally:
        server.close()
    leaked = [h for h in Recorder.seen if any(TOKEN in v or RUNTIME in v for v in h.values())]
    assert leaked == [], "the pull request's server received GitHub's token"
    assert done.returncode == 2, done.stderr[-2000:]
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "headers_from_env" in lines[0] and said in lines[0], done.stderr
    assert TOKEN not in done.stdout + done.stderr


@pytest.mark.parametrize(
    "extra",
    ["setup_pass_env: [GITHUB_TOKEN]\n", "setup_pass_env: [Actions_Runtime_Token]\n"],
)
def test_setup_pass_env_is_refused_and_setup_never_sees_a_token(tmp_path, extra):
    repo = tmp_path / "repo"
    target = f"{{kind: command, command: ['{sys.executable}', hostile.py, agent]}}"
    write_repo(repo, agent_config(target, f"setup: ['{sys.executable} hostile.py setup']\n", extra))
    done = run(repo, ["ci", "--setup", "--config", "eval-gate.yml", "--no-comment"], run_env(repo))
    assert done.returncode == 2, done.stderr[-2000:]
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "setup_pass_env" in lines[0] and "no config can hand GitHub's tokens" in lines[0]
    assert not (repo / "out" / "env-setup.json").exists(), "setup ran though its config asked for the token"


def test_command_agent_pass_env_is_refused(tmp_path):
    repo = tmp_path / "repo"
    target = f"{{kind: command, command: ['{sys.executable}', hostile.py, agent], pass_env: [GH_TOKEN, GITHUB_TOKEN]}}"
    write_repo(repo, agent_config(target))
    done = run(repo, ["run", "--config", "eval-gate.yml", "--quiet"], run_env(repo, GH_TOKEN=TOKEN))
    assert done.returncode == 2, done.stderr[-2000:]
    assert "agents[0].target.command.pass_env" in done.stderr and "no config can hand GitHub's tokens" in done.stderr
    assert not (repo / "out" / "env-agent.json").exists()


@pytest.fixture
def runner_files(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    folder = tmp_path / "runner-temp" / "_runner_file_commands"
    folder.mkdir(parents=True)
    for name, content in ORIGINAL.items():
        (folder / name).write_text(content)
    env = {variable: str(folder / name) for variable, name in VARIABLES.items()}
    return folder, {**env, "RUNNER_TEMP": str(folder.parent)}


def test_the_runners_command_files_are_put_back_the_daemon_ended_and_the_run_fails(tmp_path, runner_files):
    folder, files_env = runner_files
    repo = tmp_path / "repo"
    target = f"{{kind: command, command: ['{sys.executable}', hostile.py, agent]}}"
    write_repo(repo, agent_config(target, f"setup: ['{sys.executable} hostile.py setup']\n"))
    started = time.monotonic()
    done = run(repo, ["ci", "--setup", "--config", "eval-gate.yml", "--no-comment"], run_env(repo, **files_env))
    assert time.monotonic() - started < 120
    out = repo / "out"
    # The pull request's processes ran, and never learnt where the files are, nor got a token ...
    for kind in ("setup", "agent"):
        seen = json.loads((out / f"env-{kind}.json").read_text())
        assert not set(VARIABLES) & set(seen), kind
        assert TOKEN not in json.dumps(seen) and RUNTIME not in json.dumps(seen), kind
    # ... but found them by path and wrote them: each is put back, and the run fails with one line saying so.
    assert done.returncode == 1, done.stderr[-3000:]
    (line,) = [line for line in done.stderr.splitlines() if "command file" in line]
    assert "the pull request's code wrote the runner's command file" in line and "GITHUB_ENV" in line
    assert "Traceback" not in done.stderr
    for name, content in ORIGINAL.items():
        assert (folder / name).read_text() == content, name
    # The daemon setup left behind was ended before the check (named in the log), and never wrote.
    pid = int((out / "daemon.pid").read_text())
    assert f"(pid {pid}), which the pull request's code left running" in done.stderr
    assert not Path(f"/proc/{pid}").exists() or "Z" in Path(f"/proc/{pid}/stat").read_text().split()[2]
    assert not (out / "daemon-wrote").exists()
    assert "evil" not in (folder / "set_env_0").read_text()


def test_a_run_that_leaves_the_files_alone_passes_and_writes_its_own_outputs(tmp_path, runner_files):
    folder, files_env = runner_files
    repo = tmp_path / "repo"
    write_repo(repo, agent_config(f"{{kind: command, command: ['{sys.executable}', agent.py]}}"))
    (repo / "agent.py").write_text(
        "import json, sys\njson.load(sys.stdin)\nprint(json.dumps({'turns': [{'response': 'an answer'}]}))\n"
    )
    done = run(repo, ["ci", "--config", "eval-gate.yml", "--no-comment"], run_env(repo, **files_env))
    assert done.returncode == 0, done.stderr[-3000:]
    assert "command file" not in done.stderr and "left running" not in done.stderr
    assert (folder / "set_env_0").read_text() == ORIGINAL["set_env_0"]
    # ours come after the check: appended to what was there
    summary = (folder / "step_summary_0").read_text()
    assert summary.startswith(ORIGINAL["step_summary_0"]) and len(summary) > len(ORIGINAL["step_summary_0"])


def test_a_pythonpath_left_for_a_later_step_runs_nothing_in_the_actions_image(tmp_path):
    """Attack 5: what an earlier step left in $GITHUB_ENV (PYTHONPATH with a sitecustomize.py, PYTHONSTARTUP, a
    user site) reaches the status step's container: the image's ENTRYPOINT, run as GitHub runs it, imports none."""
    from tests.support.paths import ROOT

    evil = tmp_path / "evil"
    evil.mkdir()
    marker = tmp_path / "ran"
    (evil / "sitecustomize.py").write_text(f"open({str(marker)!r}, 'w').close()\n")
    (evil / "usercustomize.py").write_text(f"open({str(marker)!r}, 'w').close()\n")
    entry = next(line for line in (ROOT / "Dockerfile").read_text().splitlines() if line.startswith("ENTRYPOINT"))
    argv = json.loads(entry.removeprefix("ENTRYPOINT "))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "INPUT_", "ACTIONS_"))}
    env.update({"PYTHONPATH": str(evil), "PYTHONSTARTUP": str(evil / "sitecustomize.py"), "INPUT_STATUS": "failed"})
    done = subprocess.run(
        [sys.executable, *argv[1:]], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120
    )
    assert "Traceback" not in done.stderr, done.stderr[-2000:]
    assert not marker.exists(), "the image's python imported the pull request's sitecustomize.py"
