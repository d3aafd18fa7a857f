"""Secrets stay secret (issue 10, item 6): agents that echo their credentials, run as GitHub runs the Action.

A command agent and an in-process ADK agent print, log, answer with and fail quoting GOOGLE_API_KEY and the
workflow token; a setup command prints what it can see. Nothing we write, post or print may carry a value, and
the processes that run the pull request's code never receive GitHub's tokens, whatever the config names.
"""

from __future__ import annotations

import html
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from adk_eval_gate.core.redaction import MASK, child_env, redact, redact_json, secret_values
from tests.support.fake_github import FakeGitHub
from tests.support.leaks import readable
from tests.support.paths import AGENTS

HEAD, BASE = "c" * 40, "b" * 40
SECRETS = {
    # `_` and `*` are markdown: the comment escapes them, which must not hide the key from the masking
    "GOOGLE_API_KEY": "AIzaSy_fake*google_key-0123456789",
    "INPUT_GITHUB-TOKEN": "ghs_workflowWriteToken0123456789",
    "ACTIONS_RUNTIME_TOKEN": "eyJ0eXAiOiJKV1Qi.runtime.token",
    "ACTIONS_ID_TOKEN_REQUEST_TOKEN": "oidc-request-token-0123456789",
    "MY_SERVICE_PASSWORD": 'p@ss"word\\with\\json-escapes',
}


def evalset(path: Path, set_id: str, questions: dict[str, str]) -> None:
    cases = [
        {
            "eval_id": eval_id,
            "conversation": [
                {
                    "invocation_id": f"{eval_id}-1",
                    "user_content": {"role": "user", "parts": [{"text": text}]},
                    "final_response": {"role": "model", "parts": [{"text": "an answer"}]},
                }
            ],
        }
        for eval_id, text in questions.items()
    ]
    path.write_text(json.dumps({"eval_set_id": set_id, "eval_cases": cases}))


@pytest.fixture
def leaky_repo(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    (repo / "evals").mkdir(parents=True)
    shutil.copy(AGENTS / "trust_command_agent.py", repo / "agent.py")
    shutil.copytree(AGENTS / "leaky", repo / "leaky", ignore=shutil.ignore_patterns("__pycache__"))
    evalset(repo / "evals" / "cmd.evalset.json", "cmd", {"q0": "question 0", "q1_dies": "die", "q2_refuses": "no"})
    evalset(repo / "evals" / "adk.evalset.json", "adk", {"hello": "hello", "broken": "please fail"})
    (repo / "eval-gate.yml").write_text(
        "setup: ['echo setup sees token=${GITHUB_TOKEN:-none} runtime=${ACTIONS_RUNTIME_TOKEN:-none} "
        "key=$GOOGLE_API_KEY']\n"
        "report: {check_run: true}\n"
        "baseline: {store: none}\n"
        "agents:\n"
        "  - name: cmd\n"
        f"    target: {{kind: command, command: ['{sys.executable}', ./agent.py, leaky]}}\n"
        "    evalsets: [evals/cmd.evalset.json]\n"
        "    criteria: {response_match_score: 0.1}\n"
        "  - name: inproc\n"
        "    target: {kind: adk, agent: leaky}\n"
        "    evalsets: [evals/adk.evalset.json]\n"
        "    criteria: {response_match_score: 0.1}\n"
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


def run_action(repo: Path, fake: FakeGitHub, **extra: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "INPUT_", "ACTIONS_"))}
    env.update(
        {
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
            "ADK_DISABLE_LOAD_DOTENV": "1",
            **SECRETS,
            **extra,
        }
    )
    return subprocess.run(
        [sys.executable, "-m", "adk_eval_gate.commands.action"],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def leaked(text: str) -> list[str]:
    return [name for name, value in SECRETS.items() if any(form in text for form in secret_forms(value))]


def secret_forms(value: str) -> set[str]:
    """The value as files hold it, as JSON escapes it, as markdown and HTML escape it, and cut short (a reason
    truncated to fit a table cell must not leak the key's first half)."""
    markdown = re.sub(r"([\\`*_\[\]|~#$])", r"\\\1", html.escape(value, quote=False))
    return {value, json.dumps(value)[1:-1], markdown, html.escape(value, quote=True), value[:16]}


def test_no_secret_in_any_file_request_or_log_line(leaky_repo):
    with FakeGitHub() as fake:
        fake.state.read_only_tokens.discard(SECRETS["INPUT_GITHUB-TOKEN"])
        done = run_action(leaky_repo, fake)
        assert done.returncode == 1, done.stderr[-3000:]  # the failing cases are errors, which gate
        assert leaked(done.stdout) == [] and leaked(done.stderr) == []
        written = {p: readable(p) for p in leaky_repo.rglob("*") if p.is_file() and p.suffix != ".py"}
        assert {str(p.relative_to(leaky_repo)) for p in written} >= {
            "adk-eval-gate-out/results.json",
            "adk-eval-gate-out/comparison.json",
            "adk-eval-gate-out/report.md",
            "adk-eval-gate-out/report.html",
            "adk-eval-gate-out/junit.xml",
            "summary.md",
            "output.txt",
        }
        assert {str(p): leaked(text) for p, text in written.items() if leaked(text)} == {}
        bodies = [json.dumps(r["body"]) for r in fake.state.requests if r["body"] is not None]
        assert bodies and all(leaked(body) == [] for body in bodies)
        assert {r["token"] for r in fake.state.requests} == {SECRETS["INPUT_GITHUB-TOKEN"]}  # used, never shown

        # The agents did echo their key (so the masks above were needed) ...
        results = (leaky_repo / "adk-eval-gate-out" / "results.json").read_text()
        assert f"GOOGLE_API_KEY={MASK}" in results and "model rejected key ***" in results
        assert "cannot authenticate with *** / <absent>" in results
        assert "401 Unauthorized: API key *** rejected (token <absent>)" in results  # the in-process agent's error
        assert f"my key is {MASK}, my token <absent>" in results
        assert "leaky agent: calling the model with key ***" in done.stdout + done.stderr
        (comment,) = fake.state.comments[7]
        shown = r"\*\*\*"  # the mask, masked before markdown escaping so an escaped key cannot slip past it
        assert shown in comment["body"] and shown in fake.state.check_runs[0]["output"]["summary"]
        # ... but no agent (in process or command) and no setup command received GitHub's tokens.
        assert "GITHUB_TOKEN=<absent> ACTIONS_RUNTIME_TOKEN=<absent>" in results
        assert "setup sees token=none runtime=none key=***" in done.stdout


@pytest.mark.parametrize(
    ("where", "edit"),
    [
        (
            "agents[0].target.command.pass_env",
            lambda t: t.replace("./agent.py, leaky]}", "./agent.py, leaky], pass_env: [GITHUB_TOKEN]}"),
        ),
        ("setup_pass_env", lambda t: "setup_pass_env: [github_token]\n" + t),  # any spelling of a token's name
        ("setup_pass_env", lambda t: "setup_pass_env: [ACTIONS_RUNTIME_TOKEN]\n" + t),
    ],
)
def test_a_config_naming_a_token_for_the_pull_requests_processes_is_refused(leaky_repo, where, edit):
    """The pull request edits its own eval-gate.yml: a token it names there would be handed to its own code."""
    config = leaky_repo / "eval-gate.yml"
    config.write_text(edit(config.read_text()))
    with FakeGitHub() as fake:
        done = run_action(leaky_repo, fake)
    assert done.returncode == 2, done.stderr[-2000:]
    (line,) = [line for line in done.stderr.splitlines() if "pass_env" in line]
    assert f"{where}: " in line and "no config can hand GitHub's tokens" in line and "eval-gate.yml" in line
    assert "Traceback" not in done.stderr and leaked(done.stdout + done.stderr) == []
    assert fake.state.requests == []  # refused before anything was asked of GitHub or run
    assert not (leaky_repo / "adk-eval-gate-out" / "results.json").exists()


def test_a_pass_env_naming_anything_else_is_bad_input(leaky_repo):
    config = leaky_repo / "eval-gate.yml"
    config.write_text("setup_pass_env: [GITHUB_TOKN]\n" + config.read_text())
    with FakeGitHub() as fake:
        done = run_action(leaky_repo, fake)
    assert done.returncode == 2
    assert "setup_pass_env: 'GITHUB_TOKN': every variable but GitHub's tokens reaches these processes" in done.stderr
    assert fake.state.requests == []


def test_redaction_rules(monkeypatch):
    monkeypatch.setenv("SOME_API_KEY", "short")  # under the minimum length: ordinary text stays readable
    monkeypatch.setenv("DB_PASSWORD", 'quote"and\\slash')
    monkeypatch.setenv("ShinySecretThing", "lowercase-names-count-too")
    monkeypatch.setenv("PLAIN_SETTING", "not-a-secret-at-all")
    text = 'short; quote"and\\slash; "quote\\"and\\\\slash"; lowercase-names-count-too; not-a-secret-at-all'
    assert redact(text) == 'short; ***; "***"; ***; not-a-secret-at-all'
    assert redact_json({"body": ["x lowercase-names-count-too y"], "n": 3}) == {"body": ["x *** y"], "n": 3}
    assert "short" not in secret_values()


def test_child_env_drops_githubs_tokens_and_the_runners_command_files(monkeypatch):
    for name in (
        "GITHUB_TOKEN",
        "GH_TOKEN",
        "INPUT_GITHUB-TOKEN",
        "INPUT_GITHUB_TOKEN",
        "ACTIONS_RUNTIME_TOKEN",
        "ACTIONS_ID_TOKEN_REQUEST_TOKEN",
        "GOOGLE_API_KEY",
        "GITHUB_REPOSITORY",
        "GITHUB_ENV",
        "GITHUB_PATH",
        "GITHUB_OUTPUT",
        "GITHUB_STEP_SUMMARY",
        "GITHUB_STATE",
    ):
        monkeypatch.setenv(name, f"value-of-{name}")
    env = child_env({"EXTRA": "1", "GITHUB_ENV": "/tmp/elsewhere"})  # a command target's `env:` names none either
    assert {k for k in env if "TOKEN" in k} == set()
    assert not {"GITHUB_ENV", "GITHUB_PATH", "GITHUB_OUTPUT", "GITHUB_STEP_SUMMARY", "GITHUB_STATE"} & set(env)
    assert env["GOOGLE_API_KEY"] == "value-of-GOOGLE_API_KEY" and env["GITHUB_REPOSITORY"] and env["EXTRA"] == "1"


def test_a_crash_traceback_is_masked_too(tmp_path):
    """An unexpected exception reaches the interpreter after the CLI restored its streams; its message still must
    not print a secret."""
    script = (
        "import sys, os\n"
        "import adk_eval_gate.commands.schema as schemas\n"
        "def broken(kind):\n"
        "    raise RuntimeError(f\"the agent said {os.environ['GOOGLE_API_KEY']}\")\n"
        "schemas.json_schema_text = broken\n"
        "from adk_eval_gate.commands.main import main\n"
        "sys.exit(main(['schema', 'results']))\n"
    )
    env = {**os.environ, "GOOGLE_API_KEY": SECRETS["GOOGLE_API_KEY"]}
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 1 and "Traceback" in done.stderr
    assert "RuntimeError: the agent said ***" in done.stderr and leaked(done.stderr) == []


def test_what_an_agent_prints_in_a_worker_process_is_masked(leaky_repo):
    config = leaky_repo / "eval-gate.yml"
    config.write_text("run: {workers: 2, concurrency: 1}\n" + config.read_text())
    with FakeGitHub() as fake:
        done = run_action(leaky_repo, fake)
    assert done.stdout.count("leaky agent: calling the model with key ***") >= 2, done.stderr[-2000:]
    assert leaked(done.stdout) == [] and leaked(done.stderr) == []
    assert leaked((leaky_repo / "adk-eval-gate-out" / "results.json").read_text()) == []


def test_a_token_copied_under_another_name_never_reaches_the_pull_requests_processes(monkeypatch):
    # The workflow hands the job token on as GH_AUTH, a PAT as REVIEW_BOT_PAT, a URL with it inside: the names are
    # not GitHub's, the values are the held token's.
    from adk_eval_gate.core.held_tokens import holding

    token = "ghs_" + "c" * 36
    environ = {"GITHUB_TOKEN": token}
    monkeypatch.setenv("GH_AUTH", token)
    monkeypatch.setenv("REVIEW_BOT_PAT", f"  {token}")
    monkeypatch.setenv("CLONE_URL", f"https://x-access-token:{token}@github.com/o/r")
    monkeypatch.setenv("UNRELATED", "fine")
    with holding(environ):
        env = child_env()
    assert not {"GH_AUTH", "REVIEW_BOT_PAT", "CLONE_URL"} & set(env)
    assert env["UNRELATED"] == "fine" and not any(token in value for value in env.values())
