"""The Action's entrypoint run end to end as GitHub runs it, against the fake GitHub API, with the workflow's
installation token (github-actions[bot]) and with a user's personal access token."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET

import pytest

from adk_eval_gate.baseline.stores import build_store
from adk_eval_gate.config.loader import load_workflow
from adk_eval_gate.github.client import GitHubClient, Patience
from adk_eval_gate.github.context import ActionsContext
from adk_eval_gate.run.pipeline import run_plan
from adk_eval_gate.run.plan import build_plan
from tests.support.fake_github import FakeGitHub

BASE, HEAD = "b" * 40, "c" * 40
WORKFLOW_TOKEN, USER_TOKEN = "ghs_actionTokenXYZ", "ghp_userPat"
OVERRIDE = "adk-eval-gate: accept regression"


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
    store.client = GitHubClient(fake.url, "t", patience=Patience(backoff=0.001))
    store.save(results)
    event = example / "event.json"
    event.write_text(
        json.dumps(
            {
                "action": "synchronize",
                "number": 7,
                "pull_request": {
                    "number": 7,
                    "state": "open",
                    "title": "Tune the dice agent",
                    "head": {"sha": HEAD, "ref": "feature"},
                    "base": {"sha": BASE, "ref": "main"},
                    "labels": [],
                },
                "repository": {"full_name": "o/r", "default_branch": "main"},
            }
        )
    )


def gate_on_thresholds(example):
    """The example's two wrong-golden cases then fail the gate (no baseline change needed)."""
    config = example / "eval-gate.yml"
    config.write_text(
        config.read_text().replace(
            "fail_on: [regression, error, drift]", "fail_on: [regression, error, drift, threshold]"
        )
    )


def push_event(example):
    (example / "event.json").write_text(
        json.dumps(
            {"ref": "refs/heads/main", "after": BASE, "repository": {"full_name": "o/r", "default_branch": "main"}}
        )
    )
    return {"GITHUB_EVENT_NAME": "push", "GITHUB_REF": "refs/heads/main", "GITHUB_SHA": BASE, "GITHUB_BASE_REF": ""}


def run_action(
    example, fake, run_id: int, extra_env: dict[str, str] | None = None, token: str = WORKFLOW_TOKEN, cwd=None
):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "INPUT_"))}
    env.update(
        {
            "GITHUB_ACTIONS": "true",
            "GITHUB_API_URL": fake.url,
            "GITHUB_SERVER_URL": "https://github.com",
            "GITHUB_REPOSITORY": "o/r",
            "GITHUB_EVENT_NAME": "pull_request",
            "GITHUB_EVENT_PATH": str(example / "event.json"),
            "GITHUB_SHA": HEAD,
            "GITHUB_REF": "refs/pull/7/merge",
            "GITHUB_BASE_REF": "main",
            "GITHUB_RUN_ID": str(run_id),
            "GITHUB_WORKSPACE": str(example),
            "GITHUB_OUTPUT": str(example / "output.txt"),
            "GITHUB_STEP_SUMMARY": str(example / "summary.md"),
            "INPUT_CONFIG": "eval-gate.yml",
            "INPUT_GITHUB-TOKEN": token,
            "INPUT_POST-COMMENT": "true",
            **(extra_env or {}),
        }
    )
    for name in ("output.txt", "summary.md"):
        (example / name).unlink(missing_ok=True)
    return subprocess.run(
        [sys.executable, "-m", "adk_eval_gate.commands.action"],
        cwd=cwd or example,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def outputs(example) -> dict[str, str]:
    lines = (example / "output.txt").read_text().splitlines()
    values, i = {}, 0
    while i < len(lines):
        name, delimiter = lines[i].split("<<")
        values[name] = lines[i + 1]
        assert lines[i + 2] == delimiter
        i += 3
    return values


@pytest.mark.parametrize("token", [WORKFLOW_TOKEN, USER_TOKEN], ids=["installation-token", "user-token"])
def test_pull_request_run_comments_summarises_annotates_and_sets_outputs(example, fake, token):
    prepare(example, fake)
    done = run_action(example, fake, run_id=100, token=token)
    assert done.returncode == 0, done.stderr[-3000:]
    values = outputs(example)
    assert values["passed"] == "true" and values["verdict"] == "pass" and values["regressions"] == "0"
    assert values["failed-cases"] == "2" and values["comment-url"].startswith(
        "https://github.com/o/r/pull/7#issuecomment-"
    )
    assert "adk-eval-gate passed" in (example / "summary.md").read_text()
    (comment,) = fake.state.comments[7]
    assert (
        "adk-eval-gate passed" in comment["body"]
        and "workflow run](https://github.com/o/r/actions/runs/100)" in comment["body"]
    )
    assert comment["user"]["login"] == ("octocat" if token == USER_TOKEN else "github-actions[bot]")
    assert comment["body"].startswith("<!-- adk-eval-gate: eval-gate.yml -->")  # the config's path in the repository
    # the two wrong-golden cases failed on the base branch too: they did not gate, so they are notices, not errors
    assert not [line for line in done.stdout.splitlines() if line.startswith("::error")]
    assert any(
        line.startswith("::notice file=evals/dice.evalset.json,line=")
        and "roll_12_wrong_golden failed (not gating)" in line
        for line in done.stdout.splitlines()
    )
    verdict = [line for line in done.stdout.splitlines() if line.startswith("adk-eval-gate: PASS")]
    assert verdict == [
        f"adk-eval-gate: PASS — no failing condition (regression, error, drift) in 2 eval-set comparison(s) · comment: "
        f"{values['comment-url']}"
    ]
    assert (
        "adk-eval-gate: 6 case(s): 4 passed, 2 failed, 0 error(s), 0 not evaluated · baseline: branch "
        "adk-eval-gate-data" in done.stdout
    )
    assert all(
        (example / "adk-eval-gate-out" / name).exists()
        for name in ("results.json", "comparison.json", "report.md", "junit.xml")
    )
    assert token not in done.stdout + done.stderr + comment["body"]
    assert {r["token"] for r in fake.state.requests if r["path"].endswith("/comments")} == {token}

    # the next push to the pull request updates the same comment
    assert run_action(example, fake, run_id=101, token=token).returncode == 0
    assert len(fake.state.comments[7]) == 1 and "runs/101" in fake.state.comments[7][0]["body"]


def test_a_rerun_sees_the_override_label_added_since_the_event(example, fake):
    prepare(example, fake)
    gate_on_thresholds(example)
    failing = run_action(example, fake, run_id=100)
    assert failing.returncode == 1, failing.stderr[-2000:]
    errors = [
        line for line in failing.stdout.splitlines() if line.startswith("::error file=evals/dice.evalset.json,line=")
    ]
    assert len(errors) == 2 and all("failed,line" not in line for line in errors)
    (verdict,) = [line for line in failing.stdout.splitlines() if line.startswith("adk-eval-gate: FAIL")]
    assert verdict.startswith("adk-eval-gate: FAIL — 2 cases below threshold (hello_world/dice ")
    assert " · comment: https://github.com/o/r/pull/7#issuecomment-" in verdict

    fake.state.labels[7] = ["bug", OVERRIDE]  # added after the event: the re-run's payload still has no labels
    rerun = run_action(example, fake, run_id=100, extra_env={"GITHUB_RUN_ATTEMPT": "2"})
    assert rerun.returncode == 0, rerun.stdout[-2000:]
    assert fake.calls("GET", "/issues/7/labels$")
    assert any(
        line.startswith("adk-eval-gate: PASS — accepted by the override label despite 2 cases below threshold")
        for line in rerun.stdout.splitlines()
    )
    assert not [line for line in rerun.stdout.splitlines() if line.startswith("::error")]
    (comment,) = fake.state.comments[7]
    assert "<!-- adk-eval-gate-run: 100.2 -->" in comment["body"]


def test_a_label_the_api_cannot_confirm_never_overrides(example, fake):
    """The event lists the override label (since removed, say) and the labels API fails: the gate fails closed."""
    prepare(example, fake)
    gate_on_thresholds(example)
    event = json.loads((example / "event.json").read_text())
    event["pull_request"]["labels"] = [{"name": OVERRIDE}]
    (example / "event.json").write_text(json.dumps(event))
    fake.fault("GET", "/issues/7/labels$", 500, times=50)
    done = run_action(example, fake, run_id=100)
    assert done.returncode == 1, done.stdout[-2000:]
    assert "::warning title=adk-eval-gate::the pull request's labels could not be read" in done.stderr
    assert "so no label overrides the gate on this run" in done.stderr
    (comment,) = fake.state.comments[7]
    assert "adk-eval-gate failed" in comment["body"] and "no label overrides the gate on this run" in comment["body"]


@pytest.mark.parametrize("on_push", ["pass", "fail"])
def test_a_push_to_the_default_branch_stores_the_baseline_and_passes_unless_asked(example, fake, on_push):
    prepare(example, fake)
    gate_on_thresholds(example)
    config = example / "eval-gate.yml"
    config.write_text(config.read_text().replace("gate:\n", f"gate:\n  on_push: {on_push}\n"))
    done = run_action(example, fake, run_id=200, extra_env=push_event(example))
    assert done.returncode == (0 if on_push == "pass" else 1), done.stderr[-2000:]
    assert fake.file("adk-eval-gate-data", "baselines/latest.json")["sha"] == BASE
    assert outputs(example)["verdict"] == "fail"  # the comparison is still reported as it is
    verdict = next(line for line in done.stdout.splitlines() if line.startswith("adk-eval-gate: FAIL"))
    assert ("not gating" in verdict) == (on_push == "pass")
    assert f"baseline stored: branch adk-eval-gate-data: baselines/{BASE}.json" in done.stdout
    assert fake.state.comments.get(7, []) == []


def test_a_push_whose_baseline_cannot_be_stored_fails_and_says_so(example, fake):
    prepare(example, fake)
    fake.state.read_only_tokens.add(WORKFLOW_TOKEN)
    done = run_action(example, fake, run_id=200, extra_env=push_event(example))
    assert done.returncode == 1
    assert "::error title=adk-eval-gate::neither the baseline nor the history was stored" in done.stderr
    assert "the baseline was NOT stored" in done.stdout


def test_two_configs_in_different_folders_keep_two_comments_and_repository_relative_paths(example, fake):
    workspace = example.parent
    prepare(example, fake)
    shutil.copytree(example, workspace / "second", ignore=shutil.ignore_patterns("adk-eval-gate-out"))
    env = {"GITHUB_WORKSPACE": str(workspace), "GITHUB_EVENT_PATH": str(example / "event.json")}
    for run_id in (100, 101):
        for folder in ("hello_world", "second"):
            done = run_action(
                example,
                fake,
                run_id=run_id,
                extra_env={**env, "INPUT_CONFIG": f"{folder}/eval-gate.yml", "INPUT_OUTPUT-DIR": f"{folder}/out"},
                cwd=workspace,
            )
            assert done.returncode == 0, done.stderr[-2000:]
            assert f"::notice file={folder}/evals/dice.evalset.json,line=" in done.stdout
    keys = sorted(c["body"].split("\n", 1)[0] for c in fake.state.comments[7])
    assert keys == ["<!-- adk-eval-gate: hello_world/eval-gate.yml -->", "<!-- adk-eval-gate: second/eval-gate.yml -->"]
    root = ET.parse(workspace / "second" / "out" / "junit.xml").getroot()
    assert {k: root.get(k) for k in ("tests", "failures", "errors", "skipped")} == {
        "tests": "6",
        "failures": "2",
        "errors": "0",
        "skipped": "0",
    }
    assert float(root.get("time")) > 0
    assert {suite.get("file") for suite in root} == {"second/evals/dice.evalset.json"}
    assert {case.get("file") for case in root.iter("testcase")} == {"second/evals/dice.evalset.json"}


def test_bad_input_is_an_annotation_on_its_file_and_line(example, fake):
    prepare(example, fake)  # a valid event: the bad input is the config's alone
    config = example / "eval-gate.yml"
    config.write_text(config.read_text().replace("gate:\n", "gate:\n  tolerance: 5\n"))
    done = run_action(example, fake, run_id=100)
    assert done.returncode == 2
    (line,) = done.stderr.strip().splitlines()
    assert line.startswith("::error file=eval-gate.yml,line=") and "title=adk-eval-gate%3A bad input::" in line
    assert "tolerance" in line and "Traceback" not in done.stderr


def test_check_run_and_setup_commands(example, fake):
    prepare(example, fake)
    config = example / "eval-gate.yml"
    config.write_text(
        "setup: ['echo preparing the agent > setup-ran.txt']\nreport: {check_run: true, check_name: agent evals}\n"
        + config.read_text()
    )
    # the check's name is the base branch's config's: a pull request's own could name another required check
    fake.state.files[(BASE, "eval-gate.yml")] = config.read_bytes()
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
    assert "::warning title=adk-eval-gate::the token cannot comment" in done.stderr
    assert "adk-eval-gate passed" in (example / "summary.md").read_text()
    assert fake.state.comments.get(7, []) == []


def test_comment_inputs_recreate_our_comment_and_bad_values_are_one_line(example, fake):
    prepare(example, fake)
    first = run_action(example, fake, run_id=100, extra_env={"INPUT_COMMENT-MODE": "recreate"})
    assert first.returncode == 0, first.stderr[-2000:]
    (before,) = fake.state.comments[7]
    fake.make_comment(7, "a human review", fake.url)
    assert run_action(example, fake, run_id=101, extra_env={"INPUT_COMMENT-MODE": "recreate"}).returncode == 0
    bodies = [c["body"] for c in fake.state.comments[7]]
    assert len(bodies) == 2 and bodies[0] == "a human review" and "runs/101" in bodies[1]
    assert fake.state.comments[7][1]["id"] != before["id"]

    bad = run_action(example, fake, run_id=102, extra_env={"INPUT_COMMENT-WHEN": "sometimes"})
    assert bad.returncode == 2
    (line,) = bad.stderr.strip().splitlines()
    assert (
        line.startswith("::error title=adk-eval-gate%3A bad input::")
        and "--comment-when: 'sometimes' is not one of" in line
    )
