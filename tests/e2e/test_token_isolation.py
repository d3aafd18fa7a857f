"""No process the pull request's code runs can obtain GitHub's or the runner's tokens (issue 26).

A hostile `setup:` step, a hostile `command` agent, a hostile in-process `adk` agent and a hostile custom metric
(tests/support/agents/hunter) each search by every route a process on this machine has: the environment, every
/proc/*/environ and cmdline, each run process's open files and memory, ptrace, sudo, and the objects of their own
process; the agent then sends the run a pickle that would run code as it loads. The run is started as GitHub
starts it: the console script with GITHUB_TOKEN in its environment, and the Action's entry with its inputs and
the runner's tokens. The test fails if any token value is among the finds, or the pickle ran, and is shown to
look in earnest: a decoy of the same shape, which the environment does carry, must be found by the routes that
can reach it, and the routes to the process holding the tokens must have been tried and refused.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import string
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.adk_required import adk
from tests.support.fake_github import FakeGitHub
from tests.support.paths import AGENTS

adk("agents")  # the in-process agent needs google-adk (a visible skip where it is not promised)
HEAD, BASE = "c" * 40, "b" * 40
CAP_SYS_PTRACE = 19


def token() -> str:
    return "ghs_" + "".join(random.SystemRandom().choices(string.ascii_letters + string.digits, k=36))


@pytest.fixture
def hunt_repo(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    (repo / "evals").mkdir(parents=True)
    (repo / "hunts").mkdir()
    shutil.copytree(AGENTS / "hunter", repo / "hunter", ignore=shutil.ignore_patterns("__pycache__"))
    case = {
        "eval_id": "hello",
        "conversation": [
            {
                "invocation_id": "hello-1",
                "user_content": {"role": "user", "parts": [{"text": "hello"}]},
                "final_response": {"role": "model", "parts": [{"text": "hunted"}]},
            }
        ],
    }
    metric = {
        "criteria": {"hunted": 0.5},
        "custom_metrics": {"hunted": {"code_config": {"name": "hunter.hunt.metric"}}},
    }
    (repo / "evals" / "eval_config.json").write_text(json.dumps(metric))  # user metric code hunts too
    (repo / "evals" / "one.evalset.json").write_text(json.dumps({"eval_set_id": "one", "eval_cases": [case]}))
    (repo / "eval-gate.yml").write_text(
        f"setup: ['{sys.executable} hunter/hunt.py setup']\n"
        "baseline: {store: none}\n"
        "agents:\n"
        "  - name: cmd\n"
        f"    target: {{kind: command, command: ['{sys.executable}', ./hunter/hunt.py, command]}}\n"
        "    evalsets: [evals/one.evalset.json]\n"
        "    eval_config: evals/eval_config.json\n"
        "  - name: inproc\n"
        "    target: {kind: adk, agent: hunter}\n"
        "    evalsets: [evals/one.evalset.json]\n"
        "    criteria: {response_match_score: 0.5}\n"
    )
    (repo / "event.json").write_text(
        json.dumps(
            {
                "number": 7,
                "pull_request": {
                    "number": 7,
                    "head": {"sha": HEAD, "ref": "f"},
                    "base": {"sha": BASE, "ref": "main"},
                    "labels": [],
                },
                "repository": {"full_name": "o/r", "default_branch": "main"},
            }
        )
    )
    return repo


def hunted_env(repo: Path, tokens: dict[str, str], decoy: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "INPUT_", "ACTIONS_", "GH_"))}
    env.update(
        {
            "HUNT_DIR": str(repo / "hunts"),
            "HUNT_ROOT_PID": str(os.getpid()),
            "HUNT_DECOY": decoy,  # not a token: every process of the run may see it
            "HUNT_MARKER": str(repo / "smuggled"),  # created if the run ever loads the pickle a worker sends it
            "ADK_DISABLE_LOAD_DOTENV": "1",
            "CI": "true",
            **tokens,
        }
    )
    return env


def action_env(repo: Path, fake: FakeGitHub) -> dict[str, str]:
    return {
        "GITHUB_ACTIONS": "true",
        "GITHUB_API_URL": fake.url,
        "GITHUB_SERVER_URL": "https://github.com",
        "GITHUB_REPOSITORY": "o/r",
        "GITHUB_EVENT_NAME": "pull_request",
        "GITHUB_EVENT_PATH": str(repo / "event.json"),
        "GITHUB_SHA": HEAD,
        "GITHUB_REF": "refs/pull/7/merge",
        "GITHUB_BASE_REF": "main",
        "GITHUB_RUN_ID": "100",
        "GITHUB_WORKSPACE": str(repo),
        "GITHUB_OUTPUT": str(repo / "output.txt"),
        "GITHUB_STEP_SUMMARY": str(repo / "summary.md"),
        "INPUT_CONFIG": "eval-gate.yml",
    }


def hunts(repo: Path) -> dict[str, dict]:
    reports = [json.loads(path.read_text()) for path in (repo / "hunts").glob("*.json")]
    return {report["kind"]: report for report in reports}


def assert_nothing_found(repo: Path, tokens: dict[str, str], decoy: str) -> None:
    assert not (repo / "smuggled").exists(), "the run loaded a pickle from a worker: its code ran with the token"
    reports = hunts(repo)
    assert set(reports) == {"setup", "command", "adk", "metric"}, reports.keys()
    secrets = set(tokens.values())
    for kind, report in reports.items():
        leaks = {route: sorted(secrets & set(values)) for route, values in report["found"].items()}
        assert {route: names for route, names in leaks.items() if names} == {}, kind
        (holder,) = report["holders"]
        assert "ptrace" not in report["found"], kind
        # It looked in earnest: the decoy the environment carries is found where a process can see it ...
        assert decoy in report["found"]["environ"] and decoy in report["found"]["/proc/*/environ"], kind
        assert decoy in report["found"]["mem"], kind  # its own memory, read through /proc/self/mem
        # ... and the process holding the tokens was tried by every route and refused by each.
        for route in ("/proc/*/environ", "mem", "ptrace"):
            assert any(line.startswith(f"{holder}:") for line in report["refused"][route]), (kind, route)
        assert report["status"]["NoNewPrivs"] == "1", kind  # sudo and setuid binaries gain nothing
        if os.geteuid() == 0:
            for name in ("CapEff", "CapBnd"):
                assert not int(report["status"][name], 16) >> CAP_SYS_PTRACE & 1, (kind, name)
    for kind in ("adk", "metric"):  # in process: the agent and the metric walked their own process's objects
        assert reports[kind]["scanned"]["gc"] > 100_000, kind


def console_script() -> str:
    script = Path(sys.executable).parent / "adk-eval-gate"
    return str(script) if script.exists() else shutil.which("adk-eval-gate") or "adk-eval-gate"


@pytest.mark.parametrize("workers", ["auto", 1])  # 1: the agents' own process, which must not be ours then
def test_no_token_reaches_the_pull_requests_code_run_by_the_cli(hunt_repo, workers):
    config = hunt_repo / "eval-gate.yml"
    config.write_text(f"run: {{workers: {workers}}}\n" + config.read_text())
    tokens = {"GITHUB_TOKEN": token(), "GH_TOKEN": token(), "ACTIONS_RUNTIME_TOKEN": token()}
    decoy = token()
    done = subprocess.run(
        # --setup: outside Actions `setup:` runs only when asked, and the hostile setup step must run
        [console_script(), "ci", "--setup", "--config", "eval-gate.yml", "--no-comment"],
        cwd=hunt_repo,
        env=hunted_env(hunt_repo, tokens, decoy),
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode in (0, 1), done.stderr[-3000:]
    assert "Traceback" not in done.stderr and "GitHub's token" not in done.stderr, done.stderr[-3000:]
    assert "a parent of this process" not in done.stderr  # the test, its parent, holds none
    assert_nothing_found(hunt_repo, tokens, decoy)


def test_no_token_reaches_the_pull_requests_code_run_by_the_action(hunt_repo):
    tokens = {
        "INPUT_GITHUB-TOKEN": token(),
        "ACTIONS_RUNTIME_TOKEN": token(),
        "ACTIONS_ID_TOKEN_REQUEST_TOKEN": token(),
        "ACTIONS_CACHE_TOKEN": token(),
    }
    decoy = token()
    with FakeGitHub() as fake:
        env = {**hunted_env(hunt_repo, tokens, decoy), **action_env(hunt_repo, fake)}
        done = subprocess.run(
            [sys.executable, "-I", "-u", "-B", "-m", "adk_eval_gate.commands.action"],  # the image's ENTRYPOINT
            cwd=hunt_repo,
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert done.returncode in (0, 1), done.stderr[-3000:]
        # The token still did its job: every request to GitHub carried it.
        assert fake.state.requests and {r["token"] for r in fake.state.requests} == {tokens["INPUT_GITHUB-TOKEN"]}
    assert_nothing_found(hunt_repo, tokens, decoy)
