"""The Action's entrypoint run end to end as GitHub runs it, against the fake GitHub API."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from adk_eval_gate.baseline.stores import build_store
from adk_eval_gate.config.loader import load_workflow
from adk_eval_gate.github.client import GitHubClient
from adk_eval_gate.github.context import ActionsContext
from adk_eval_gate.pipeline import run_plan
from adk_eval_gate.plan import build_plan

from .fake_github import FakeGitHub

BASE, HEAD = "b" * 40, "c" * 40


@pytest.fixture
def fake():
    with FakeGitHub() as server:
        yield server
        assert server.state.schema_errors == [], server.state.schema_errors


def prepare(example, fake):
    config = example / "eval-gate.yml"
    kept = [line for line in config.read_text().splitlines(keepends=True) if not line.startswith("baseline:")]
    config.write_text("baseline: {store: branch}\n" + "".join(kept))
    results = run_plan(build_plan(config), quiet=True)
    results.git.sha = BASE
    store = build_store(load_workflow(config), ActionsContext(api_url=fake.url, repository="o/r", token="t", sha=BASE))
    store.client = GitHubClient(fake.url, "t", backoff=0.001)
    store.save(results)
    event = example / "event.json"
    event.write_text(json.dumps({
        "action": "synchronize", "number": 7,
        "pull_request": {"number": 7, "state": "open", "title": "Tune the dice agent",
                         "head": {"sha": HEAD, "ref": "feature"}, "base": {"sha": BASE, "ref": "main"}, "labels": []},
        "repository": {"full_name": "o/r", "default_branch": "main"}}))


def run_action(example, fake, run_id: int, extra_env: dict[str, str] | None = None):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "INPUT_"))}
    env.update({
        "GITHUB_ACTIONS": "true", "GITHUB_API_URL": fake.url, "GITHUB_SERVER_URL": "https://github.com",
        "GITHUB_REPOSITORY": "o/r", "GITHUB_EVENT_NAME": "pull_request", "GITHUB_EVENT_PATH": str(example / "event.json"),
        "GITHUB_SHA": HEAD, "GITHUB_REF": "refs/pull/7/merge", "GITHUB_BASE_REF": "main", "GITHUB_RUN_ID": str(run_id),
        "GITHUB_WORKSPACE": str(example), "GITHUB_OUTPUT": str(example / "output.txt"),
        "GITHUB_STEP_SUMMARY": str(example / "summary.md"),
        "INPUT_CONFIG": "eval-gate.yml", "INPUT_GITHUB-TOKEN": "ghs_actionTokenXYZ", "INPUT_POST-COMMENT": "true",
        **(extra_env or {}),
    })
    for name in ("output.txt", "summary.md"):
        (example / name).unlink(missing_ok=True)
    return subprocess.run([sys.executable, "-m", "adk_eval_gate.action"], cwd=example, env=env, capture_output=True,
                          text=True, timeout=300)


def outputs(example) -> dict[str, str]:
    lines = (example / "output.txt").read_text().splitlines()
    values, i = {}, 0
    while i < len(lines):
        name, delimiter = lines[i].split("<<")
        values[name] = lines[i + 1]
        assert lines[i + 2] == delimiter
        i += 3
    return values


def test_pull_request_run_comments_summarises_annotates_and_sets_outputs(example, fake):
    prepare(example, fake)
    done = run_action(example, fake, run_id=100)
    assert done.returncode == 0, done.stderr[-3000:]
    values = outputs(example)
    assert values["passed"] == "true" and values["verdict"] == "pass" and values["regressions"] == "0"
    assert values["failed-cases"] == "2" and values["comment-url"].startswith("https://github.com/o/r/pull/7#issuecomment-")
    assert "adk-eval-gate passed" in (example / "summary.md").read_text()
    (comment,) = fake.state.comments[7]
    assert "adk-eval-gate passed" in comment["body"] and "workflow run](https://github.com/o/r/actions/runs/100)" in comment["body"]
    annotations = [line for line in done.stdout.splitlines() if line.startswith("::error ")]
    assert any(line.startswith("::error file=evals/dice.evalset.json,line=") and "roll_12_wrong_golden failed" in line
               for line in annotations)
    assert all((example / "adk-eval-gate-out" / name).exists() for name in ("results.json", "comparison.json", "report.md", "junit.xml"))
    assert "ghs_actionTokenXYZ" not in done.stdout + done.stderr + comment["body"]
    assert {r["token"] for r in fake.state.requests if r["path"].endswith("/comments")} == {"ghs_actionTokenXYZ"}

    # the next push to the pull request updates the same comment
    assert run_action(example, fake, run_id=101).returncode == 0
    assert len(fake.state.comments[7]) == 1 and "runs/101" in fake.state.comments[7][0]["body"]


def test_check_run_and_setup_commands(example, fake):
    prepare(example, fake)
    config = example / "eval-gate.yml"
    config.write_text("setup: ['echo preparing the agent > setup-ran.txt']\nreport: {check_run: true, check_name: agent evals}\n"
                      + config.read_text())
    done = run_action(example, fake, run_id=100)
    assert done.returncode == 0, done.stderr[-2000:]
    assert (example / "setup-ran.txt").read_text().strip() == "preparing the agent"
    assert "::group::setup: echo preparing the agent" in done.stdout and "::endgroup::" in done.stdout
    (check,) = fake.state.check_runs
    assert check["name"] == "agent evals" and check["conclusion"] == "success" and check["head_sha"] == HEAD
    assert "adk-eval-gate passed" in check["output"]["summary"]


def test_read_only_token_still_writes_the_step_summary_and_gates(example, fake):
    prepare(example, fake)
    fake.state.read_only_tokens.add("ghs_actionTokenXYZ")
    done = run_action(example, fake, run_id=100)
    assert done.returncode == 0
    assert "token cannot comment" in done.stderr
    assert "adk-eval-gate passed" in (example / "summary.md").read_text()
    assert fake.state.comments.get(7, []) == []
