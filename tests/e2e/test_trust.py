"""No typo passes and the fork flow trusts nothing but the fork's results (issue 10, items 4 and 5).

Real parts throughout: a command-protocol agent run by the real pipeline, the CLI as a user calls it, and our
GitHub client over HTTP against tests/support/fake_github.py.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

from adk_eval_gate.commands.main import main
from adk_eval_gate.config.loader import load_workflow
from adk_eval_gate.handshake.ours import marker
from tests.support.fake_github import FakeGitHub
from tests.support.paths import AGENTS

AGENT = AGENTS / "trust_command_agent.py"
HEAD = "c" * 40
BASE = "b" * 40


def make_repo(root: Path, mode: str, *, cases: int = 10, extra: str = "") -> Path:
    """A repository with one eval set of `cases` one-turn cases, each expecting one `lookup` call."""
    (root / "evals").mkdir(parents=True, exist_ok=True)
    shutil.copy(AGENT, root / "agent.py")
    eval_cases = [
        {
            "eval_id": f"q{i}",
            "conversation": [
                {
                    "invocation_id": f"q{i}-1",
                    "user_content": {"role": "user", "parts": [{"text": f"question {i}"}]},
                    "final_response": {"role": "model", "parts": [{"text": f"The answer to question {i}"}]},
                    "intermediate_data": {
                        "tool_uses": [{"name": "lookup", "args": {"q": f"question {i}"}}],
                        "intermediate_responses": [],
                    },
                }
            ],
        }
        for i in range(cases)
    ]
    (root / "evals" / "qa.evalset.json").write_text(json.dumps({"eval_set_id": "qa", "eval_cases": eval_cases}))
    config = root / "eval-gate.yml"
    config.write_text(
        f"{extra}agents:\n  - name: qa\n"
        f"    target: {{kind: command, command: ['{sys.executable}', ./agent.py, {mode}]}}\n"
        "    evalsets: [evals/qa.evalset.json]\n    criteria: {tool_trajectory_avg_score: 1.0}\n"
    )
    return config


def pull_request_event(path: Path, number: int = 7, head: str = HEAD) -> Path:
    path.write_text(
        json.dumps(
            {
                "action": "synchronize",
                "number": number,
                "pull_request": {
                    "number": number,
                    "head": {"sha": head, "ref": "feature"},
                    "base": {"sha": BASE, "ref": "main"},
                    "labels": [],
                },
                "repository": {"full_name": "o/r", "default_branch": "main"},
            }
        )
    )
    return path


# --- item 4: no typo passes ---------------------------------------------------------------------------------------


def test_compare_with_a_baseline_path_that_does_not_exist_is_bad_input(example, tmp_path, capsys):
    results = tmp_path / "results.json"
    assert main(["run", "--config", str(example / "eval-gate.yml"), "--output", str(results), "--quiet"]) == 1
    capsys.readouterr()
    assert main(["compare", "--results", str(results), "--baseline", str(tmp_path / "baseline.jsn")]) == 2
    err = capsys.readouterr().err
    assert "--baseline: no file at" in err and "baseline.jsn" in err and len(err.splitlines()) == 1
    assert (
        main(
            [
                "compare",
                "--results",
                str(results),
                "--baseline",
                str(example / "baseline" / "results.json"),
                "--output",
                str(tmp_path / "c.json"),
            ]
        )
        == 0
    )


@pytest.mark.parametrize(
    ("name", "payload", "field"),
    [
        ("pull_request", None, "GITHUB_EVENT_PATH"),  # the file does not exist
        ("pull_request", "{not json", "not valid JSON"),
        ("pull_request", "[1, 2]", "not a JSON object"),
        (
            "pull_request",
            {"pull_request": {"number": "7", "head": {"sha": HEAD}, "base": {"sha": BASE, "ref": "main"}}},
            "pull_request.number",
        ),
        (
            "pull_request",
            {"pull_request": {"number": 7, "head": {"ref": "x"}, "base": {"sha": BASE, "ref": "main"}}},
            "pull_request.head.sha",
        ),
        (
            "pull_request_target",
            {"pull_request": {"number": 7, "head": {"sha": HEAD}, "base": {"ref": "main"}}},
            "pull_request.base.sha",
        ),
        ("pull_request", {"number": 7}, "pull_request"),
        (
            "pull_request_review",
            {"pull_request": {"number": 7, "base": {"sha": BASE, "ref": "main"}}},
            "pull_request.head",
        ),
        ("push", {"ref": "refs/heads/main", "after": HEAD}, "repository"),
        (
            "push",
            {"ref": "refs/heads/main", "after": "not-a-sha", "repository": {"default_branch": "main"}},
            "after",
        ),
        (
            "workflow_run",
            {"workflow_run": {"id": 5, "event": "pull_request"}, "repository": {"default_branch": "main"}},
            "workflow_run.head_sha",
        ),
    ],
)
def test_in_actions_a_broken_event_payload_is_exit_2_naming_the_field(
    example, tmp_path, monkeypatch, capsys, name, payload, field
):
    event = tmp_path / "event.json"
    if payload is not None:
        event.write_text(payload if isinstance(payload, str) else json.dumps(payload))
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    monkeypatch.setenv("GITHUB_EVENT_NAME", name)
    monkeypatch.setenv("GITHUB_EVENT_PATH", str(event))
    out = tmp_path / "out"
    assert main(["ci", "--config", str(example / "eval-gate.yml"), "--output-dir", str(out), "--quiet"]) == 2
    err = capsys.readouterr().err
    # in Actions the one line is an annotation, shown on the run's summary
    assert err.startswith("::error ") and "bad input::" in err and field in err and len(err.splitlines()) == 1
    assert not out.exists()  # refused before any agent ran


def test_in_actions_a_missing_event_name_or_path_is_exit_2(example, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    assert main(["ci", "--config", str(example / "eval-gate.yml"), "--output-dir", str(tmp_path), "--quiet"]) == 2
    assert "GITHUB_EVENT_NAME: is not set" in capsys.readouterr().err
    monkeypatch.setenv("GITHUB_EVENT_NAME", "pull_request")
    assert main(["ci", "--config", str(example / "eval-gate.yml"), "--output-dir", str(tmp_path), "--quiet"]) == 2
    assert "GITHUB_EVENT_PATH: is not set" in capsys.readouterr().err


def test_outside_actions_a_garbage_payload_is_refused_and_no_payload_runs_locally(
    example, tmp_path, monkeypatch, capsys
):
    """Any other CI that sets GITHUB_EVENT_PATH asked for that payload: a broken one is not "no pull request"."""
    event = tmp_path / "event.json"
    event.write_text("{not json")
    monkeypatch.setenv("GITHUB_EVENT_PATH", str(event))
    monkeypatch.setenv("GITHUB_EVENT_NAME", "pull_request")
    argv = [
        "ci",
        "--config",
        str(example / "eval-gate.yml"),
        "--output-dir",
        str(tmp_path / "out"),
        "--quiet",
    ]
    assert main(argv) == 2
    (line,) = capsys.readouterr().err.splitlines()
    assert line.startswith(f"error: {event}:1: ") and "GITHUB_EVENT_PATH" in line and "not valid JSON" in line
    assert not (tmp_path / "out").exists()
    monkeypatch.delenv("GITHUB_EVENT_PATH")
    assert main(argv) == 0
    assert not (tmp_path / "out" / "pull-request.json").exists()  # local mode: nothing about a pull request


def test_a_workflow_dispatch_payload_needs_no_pull_request(example, tmp_path, monkeypatch):
    event = tmp_path / "event.json"
    event.write_text(json.dumps({"inputs": {}, "ref": "refs/heads/main"}))
    for key, value in {
        "GITHUB_ACTIONS": "true",
        "GITHUB_EVENT_NAME": "workflow_dispatch",
        "GITHUB_EVENT_PATH": str(event),
    }.items():
        monkeypatch.setenv(key, value)
    assert (
        main(
            [
                "ci",
                "--config",
                str(example / "eval-gate.yml"),
                "--output-dir",
                str(tmp_path / "out"),
                "--quiet",
            ]
        )
        == 0
    )


def test_a_config_without_baseline_uses_the_artifact_store(tmp_path):
    config = make_repo(tmp_path / "repo", "good")
    assert load_workflow(config).settings.baseline.model_dump() == {
        "store": "artifact",
        "name": "adk-eval-gate-results",
        "workflow": None,
        "max_age_days": 14.0,
    }


def test_validate_says_when_nothing_will_be_compared(tmp_path, capsys):
    config = make_repo(tmp_path / "repo", "good", extra="baseline: {store: none}\n")
    assert main(["validate", "--config", str(config)]) == 0
    assert "baseline: NONE (baseline.store: none): nothing will be compared" in capsys.readouterr().out
    make_repo(tmp_path / "repo", "good")
    assert main(["validate", "--config", str(config)]) == 0
    assert "baseline: artifact 'adk-eval-gate-results'" in capsys.readouterr().out
    make_repo(tmp_path / "repo", "good", extra="baseline: {store: file, path: base.json}\n")
    assert main(["validate", "--config", str(config)]) == 0
    assert "baseline: NONE yet: base.json does not exist" in capsys.readouterr().out


def actions_env(monkeypatch, fake: FakeGitHub, tmp_path: Path, event_name: str, event: Path, **extra: str) -> None:
    values = {
        "GITHUB_ACTIONS": "true",
        "GITHUB_API_URL": fake.url,
        "GITHUB_REPOSITORY": "o/r",
        "GITHUB_TOKEN": "ghs_workflowToken1",
        "GITHUB_EVENT_NAME": event_name,
        "GITHUB_EVENT_PATH": str(event),
        "GITHUB_RUN_ID": "100",
        "GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md"),
        "GITHUB_OUTPUT": str(tmp_path / "output.txt"),
        "GITHUB_WORKSPACE": str(tmp_path),
        **extra,
    }
    for key, value in values.items():
        monkeypatch.setenv(key, value)


def test_the_quick_start_compares_the_second_pull_request_with_the_default_branch(tmp_path, monkeypatch, capsys):
    """The README flow on a fresh repository: no `baseline:` in the config, one workflow on push and pull_request
    that uploads adk-eval-gate-out/results.json as `adk-eval-gate-results` on pushes."""
    config = make_repo(tmp_path / "repo", "good")
    with FakeGitHub() as fake:
        # The first pull request: nothing on main yet, and the comment's headline says so.
        actions_env(
            monkeypatch,
            fake,
            tmp_path,
            "pull_request",
            pull_request_event(tmp_path / "pr1.json", 1),
            GITHUB_BASE_REF="main",
        )
        assert main(["ci", "--config", str(config), "--output-dir", str(tmp_path / "pr1"), "--quiet"]) == 0
        first = fake.state.comments[1][0]["body"]
        assert any(
            "adk-eval-gate passed — ⚠️ no baseline, nothing was compared" in line for line in first.splitlines()[:5]
        )
        assert "no push run on main has an artifact named 'adk-eval-gate-results'" in first
        err = capsys.readouterr().err
        assert "::warning title=adk-eval-gate::no baseline, nothing was compared" in err
        # It merges: the push run on main stores nothing itself, the workflow uploads its results.json.
        push = tmp_path / "push.json"
        push.write_text(json.dumps({"ref": "refs/heads/main", "after": BASE, "repository": {"default_branch": "main"}}))
        actions_env(monkeypatch, fake, tmp_path, "push", push, GITHUB_REF="refs/heads/main", GITHUB_SHA=BASE)
        monkeypatch.delenv("GITHUB_BASE_REF")
        assert main(["ci", "--config", str(config), "--output-dir", str(tmp_path / "main"), "--quiet"]) == 0
        fake.add_run(200, BASE, "2026-11-23T10:00:00Z")
        fake.add_artifact(
            300,
            200,
            "adk-eval-gate-results",
            {"results.json": (tmp_path / "main" / "results.json").read_bytes()},
        )
        # The second pull request is compared with main's results.
        actions_env(
            monkeypatch,
            fake,
            tmp_path,
            "pull_request",
            pull_request_event(tmp_path / "pr2.json", 2),
            GITHUB_BASE_REF="main",
        )
        assert main(["ci", "--config", str(config), "--output-dir", str(tmp_path / "pr2"), "--quiet"]) == 0
        comparison = json.loads((tmp_path / "pr2" / "comparison.json").read_text())
        assert comparison["baseline"]["source"] == "artifact adk-eval-gate-results of run 200"
        assert comparison["summaries"][0]["cases_compared"] == 10
        second = fake.state.comments[2][0]["body"]
        assert "no baseline" not in second and "adk-eval-gate passed" in second
        assert fake.state.schema_errors == []


def test_the_console_headline_says_there_was_no_baseline(example, tmp_path, capsys):
    results = tmp_path / "results.json"
    main(["run", "--config", str(example / "eval-gate.yml"), "--output", str(results), "--quiet"])
    capsys.readouterr()
    assert main(["compare", "--results", str(results), "--output", str(tmp_path / "c.json")]) == 0
    assert capsys.readouterr().out.splitlines()[0].startswith("Gate: PASS — NO BASELINE, nothing was compared")


# --- item 5: the fork flow trusts nothing but the fork's results ---------------------------------------------------


@pytest.fixture
def trusted_base(tmp_path):
    """The base repository: a good agent, its blessed results, and a gate that fails on regressions."""
    config = make_repo(
        tmp_path / "base",
        "good",
        extra="baseline: {store: file, path: baseline.json}\ngate: {fail_on: [regression, error]}\n",
    )
    assert main(["run", "--config", str(config), "--output", str(tmp_path / "base" / "baseline.json"), "--quiet"]) == 0
    return config


@pytest.fixture
def forged_artifact(tmp_path, monkeypatch, trusted_base):
    """A fork whose agent dropped every tool call, whose own config no longer gates anything, and whose artifact
    then claims a pass and a comment key of its choosing."""
    config = make_repo(tmp_path / "fork", "broken", extra="baseline: {store: none}\ngate: {fail_on: []}\n")
    monkeypatch.setenv("GITHUB_EVENT_NAME", "pull_request")
    monkeypatch.setenv("GITHUB_EVENT_PATH", str(pull_request_event(tmp_path / "pr.json")))
    out = tmp_path / "artifact"
    assert main(["ci", "--config", str(config), "--output-dir", str(out), "--quiet"]) == 0  # the fork's own verdict
    comparison = json.loads((out / "comparison.json").read_text())
    comparison["verdict"] = "pass"
    comparison["gate"].update(verdict="pass", reason="all good, ship it @maintainers", failures=[])
    (out / "comparison.json").write_text(json.dumps(comparison))
    claimed = json.loads((out / "pull-request.json").read_text())
    (out / "pull-request.json").write_text(json.dumps({**claimed, "comment_key": "forged-key"}))
    (out / "report.md").write_text("## ✅ adk-eval-gate passed\n")
    for name in ("GITHUB_EVENT_NAME", "GITHUB_EVENT_PATH"):
        monkeypatch.delenv(name)
    return out


def workflow_run_env(monkeypatch, fake: FakeGitHub, tmp_path: Path, *, pull_requests: list[dict] | None = None) -> None:
    event = tmp_path / "workflow_run.json"
    event.write_text(
        json.dumps(
            {
                "action": "completed",
                "repository": {"full_name": "o/r", "default_branch": "main"},
                "workflow_run": {
                    "id": 555,
                    "run_attempt": 1,
                    "head_sha": HEAD,
                    "event": "pull_request",
                    "head_branch": "feature",
                    "pull_requests": pull_requests or [],
                    "html_url": "https://github.com/o/r/actions/runs/555",
                },
            }
        )
    )
    actions_env(monkeypatch, fake, tmp_path, "workflow_run", event, GITHUB_TOKEN="ghs_publishWriteToken")
    monkeypatch.delenv("GITHUB_OUTPUT")


def test_a_forged_comparison_and_gate_still_fail_under_the_trusted_key(
    forged_artifact, trusted_base, tmp_path, monkeypatch, capsys
):
    with FakeGitHub() as fake:
        fake.add_pull(7, HEAD)
        workflow_run_env(monkeypatch, fake, tmp_path)
        code = main(
            [
                "publish",
                "--dir",
                str(forged_artifact),
                "--config",
                str(trusted_base),
                "--output-dir",
                str(tmp_path / "published"),
            ]
        )
        captured = capsys.readouterr()
        assert code == 1
        (comment,) = fake.state.comments[7]
        body = comment["body"]
        # the key `ci` gives the trusted config: its path from the repository root (GITHUB_WORKSPACE)
        assert body.startswith(marker("base/eval-gate.yml")) and "forged-key" not in body
        assert "adk-eval-gate failed" in body and "🔴 regressed" in body and "ship it" not in body
        assert (
            "the artifact's comparison.json says 'pass' but the base branch's policy and baseline say 'fail'"
            in captured.err
        )
        assert json.loads(captured.out.splitlines()[-1])["verdict"] == "fail"
        trusted = json.loads((tmp_path / "published" / "comparison.json").read_text())
        assert (
            trusted["gate"]["fail_on"] == ["regression", "error"] and trusted["baseline"]["source"] == "baseline.json"
        )
        assert fake.state.schema_errors == []


def test_the_pull_request_number_comes_from_the_event_and_is_checked_with_the_api(
    forged_artifact, trusted_base, tmp_path, monkeypatch
):
    claimed = json.loads((forged_artifact / "pull-request.json").read_text())
    (forged_artifact / "pull-request.json").write_text(json.dumps({**claimed, "number": 8}))  # someone else's PR
    with FakeGitHub() as fake:
        fake.add_pull(8, "e" * 40)
        fake.add_pull(9, HEAD)
        workflow_run_env(monkeypatch, fake, tmp_path, pull_requests=[{"number": 9}])
        assert (
            main(
                [
                    "publish",
                    "--dir",
                    str(forged_artifact),
                    "--config",
                    str(trusted_base),
                    "--output-dir",
                    str(tmp_path / "published"),
                ]
            )
            == 1
        )
        assert 8 not in fake.state.comments and len(fake.state.comments[9]) == 1


def test_the_override_label_is_read_from_github_not_from_the_artifact(
    forged_artifact, trusted_base, tmp_path, monkeypatch
):
    with FakeGitHub() as fake:
        fake.add_pull(7, HEAD)
        fake.state.pulls[7]["labels"] = [
            {
                "id": 1,
                "node_id": "L",
                "url": "https://x",
                "name": "adk-eval-gate: accept regression",
                "description": None,
                "color": "fff",
                "default": False,
            }
        ]
        workflow_run_env(monkeypatch, fake, tmp_path)
        assert (
            main(
                [
                    "publish",
                    "--dir",
                    str(forged_artifact),
                    "--config",
                    str(trusted_base),
                    "--output-dir",
                    str(tmp_path / "published"),
                ]
            )
            == 0
        )
        assert "(accepted by label)" in fake.state.comments[7][0]["body"]


def test_publish_needs_the_trusted_config(forged_artifact, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["publish", "--dir", str(forged_artifact)])
    assert exit_info.value.code == 2 and "--config" in capsys.readouterr().err


def test_publish_refuses_a_run_that_was_not_a_pull_requests(
    forged_artifact, trusted_base, tmp_path, monkeypatch, capsys
):
    with FakeGitHub() as fake:
        workflow_run_env(monkeypatch, fake, tmp_path)
        event = json.loads((tmp_path / "workflow_run.json").read_text())
        event["workflow_run"]["event"] = "push"
        (tmp_path / "workflow_run.json").write_text(json.dumps(event))
        assert main(["publish", "--dir", str(forged_artifact), "--config", str(trusted_base)]) == 2
        assert "workflow_run.event: is 'push', not a pull request's run" in capsys.readouterr().err
        assert fake.state.requests == []


def test_a_baseline_store_that_breaks_fails_closed(tmp_path, monkeypatch, capsys):
    """A workflow without `actions: read` gets 403 from the artifact store: that is not "no baseline yet", it is
    a gate that cannot see a regression, and it fails under `error` saying what to grant."""
    config = make_repo(tmp_path / "repo", "good")
    with FakeGitHub() as fake:
        fake.fault("GET", "/actions/runs$", 403, body={"message": "Resource not accessible by integration"})
        actions_env(
            monkeypatch,
            fake,
            tmp_path,
            "pull_request",
            pull_request_event(tmp_path / "pr.json"),
            GITHUB_BASE_REF="main",
        )
        assert main(["ci", "--config", str(config), "--output-dir", str(tmp_path / "out"), "--quiet"]) == 1
        body = fake.state.comments[7][0]["body"]
        assert "adk-eval-gate failed — ⚠️ no baseline, nothing was compared" in body
        assert "the baseline could not be loaded" in body and "does the workflow grant \\`actions: read\\`?" in body
        config.write_text("gate: {fail_on: [regression]}\n" + config.read_text())
        fake.fault("GET", "/actions/runs$", 403, body={"message": "Resource not accessible by integration"})
        assert main(["ci", "--config", str(config), "--output-dir", str(tmp_path / "out"), "--quiet"]) == 0


def test_a_push_run_whose_gate_failed_still_becomes_the_baseline(tmp_path, monkeypatch):
    """A regression merged with the override label fails main's push run; its uploaded results (if: always())
    are still what main now is, so the next pull request is compared with them, not with the older run."""
    config = make_repo(tmp_path / "repo", "good")
    with FakeGitHub() as fake:
        push = tmp_path / "push.json"
        push.write_text(json.dumps({"ref": "refs/heads/main", "after": BASE, "repository": {"default_branch": "main"}}))
        actions_env(monkeypatch, fake, tmp_path, "push", push, GITHUB_REF="refs/heads/main", GITHUB_SHA=BASE)
        assert main(["ci", "--config", str(config), "--output-dir", str(tmp_path / "good"), "--quiet"]) == 0
        fake.add_run(200, "a" * 40, "2026-11-22T10:00:00Z")
        fake.add_artifact(
            300, 200, "adk-eval-gate-results", {"r.json": (tmp_path / "good" / "results.json").read_bytes()}
        )
        make_repo(tmp_path / "repo", "broken")
        # the push stores the baseline and exits 0 (gate.on_push: pass), whatever its comparison says
        assert main(["ci", "--config", str(config), "--output-dir", str(tmp_path / "broken"), "--quiet"]) == 0
        assert json.loads((tmp_path / "broken" / "comparison.json").read_text())["verdict"] == "fail"
        fake.add_run(201, BASE, "2026-11-23T10:00:00Z", conclusion="failure")
        fake.add_artifact(
            301, 201, "adk-eval-gate-results", {"r.json": (tmp_path / "broken" / "results.json").read_bytes()}
        )
        # a cancelled run's `if: always()` upload holds results that stopped early: never a baseline
        cut_short = json.loads((tmp_path / "good" / "results.json").read_text()) | {"interrupted": True}
        fake.add_run(202, BASE, "2026-11-23T11:00:00Z", conclusion="cancelled")
        fake.add_artifact(302, 202, "adk-eval-gate-results", {"r.json": json.dumps(cut_short).encode()})
        actions_env(
            monkeypatch,
            fake,
            tmp_path,
            "pull_request",
            pull_request_event(tmp_path / "pr.json"),
            GITHUB_BASE_REF="main",
        )
        monkeypatch.delenv("GITHUB_REF")
        assert main(["ci", "--config", str(config), "--output-dir", str(tmp_path / "pr"), "--quiet"]) == 0
        comparison = json.loads((tmp_path / "pr" / "comparison.json").read_text())
        assert comparison["baseline"]["source"] == "artifact adk-eval-gate-results of run 201"
        assert {row["verdict"] for row in comparison["rows"]} == {"unchanged"}  # broken then, broken now
