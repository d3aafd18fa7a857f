"""Matrix shards merged into one verdict, and the trusted `publish` half of the fork-safe workflow."""

from __future__ import annotations

import json

import pytest

from adk_eval_gate.commands.main import main
from adk_eval_gate.github.context import ActionsContext
from adk_eval_gate.publish.fork import run_publish
from adk_eval_gate.run.shards import shard_of
from tests.support.fake_github import FakeGitHub

HEAD = "c" * 40


def test_shards_cover_every_case_once_and_merge_into_the_unsharded_verdict(example, tmp_path, capsys, monkeypatch):
    for key in ("GITHUB_STEP_SUMMARY", "GITHUB_OUTPUT", "GITHUB_EVENT_PATH", "GITHUB_ACTIONS"):
        monkeypatch.delenv(key, raising=False)
    config = str(example / "eval-gate.yml")
    for i in (1, 2, 3):
        assert (
            main(["ci", "--config", config, "--shard", f"{i}/3", "--output-dir", str(tmp_path / f"s{i}"), "--quiet"])
            == 0
        )
    shards = [json.loads((tmp_path / f"s{i}" / "results.json").read_text()) for i in (1, 2, 3)]
    ids = [c["eval_id"] for s in shards for e in s["eval_sets"] for c in e["cases"]]
    assert sorted(ids) == sorted(
        {"roll_6", "roll_20", "capabilities", "dice_then_primes", "roll_12_wrong_golden", "primes_paraphrased"}
    )
    assert shard_of("hello_world", "dice", "roll_6", 3) == shard_of("hello_world", "dice", "roll_6", 3)
    capsys.readouterr()
    code = main(
        [
            "merge",
            *(str(tmp_path / f"s{i}" / "results.json") for i in (1, 2, 3)),
            "--config",
            config,
            "--output-dir",
            str(tmp_path / "merged"),
        ]
    )
    assert code == 0
    merged = json.loads((tmp_path / "merged" / "comparison.json").read_text())
    assert merged["verdict"] == "pass" and {s["cases_compared"] for s in merged["summaries"]} == {6}
    # what the shards spent, added up (the report's spend line reads it)
    spent = json.loads((tmp_path / "merged" / "results.json").read_text())["agent_usage"]["hello_world"]
    calls = [s["agent_usage"]["hello_world"]["model_calls"] for s in shards]
    assert all(calls) and spent["model_calls"] == sum(calls)
    assert "adk-eval-gate passed" in capsys.readouterr().out
    assert (
        main(
            [
                "merge",
                str(tmp_path / "s1" / "results.json"),
                str(tmp_path / "s1" / "results.json"),
                "--config",
                config,
                "--output-dir",
                str(tmp_path / "dup"),
            ]
        )
        == 2
    )


def test_a_push_never_stores_part_of_the_suite_or_a_run_that_stopped_early(example, tmp_path, capsys, monkeypatch):
    """Merging only some shards, or a run cut short, on the default branch: the committed baseline stays as it
    was, and the job fails so someone looks (a baseline missing cases would let them regress as `new`)."""
    for key in ("GITHUB_STEP_SUMMARY", "GITHUB_OUTPUT", "GITHUB_ACTIONS"):
        monkeypatch.delenv(key, raising=False)
    config = str(example / "eval-gate.yml")
    baseline = example / "baseline" / "results.json"
    before = baseline.read_bytes()
    assert main(["ci", "--config", config, "--shard", "1/2", "--output-dir", str(tmp_path / "s1"), "--quiet"]) == 0
    push = tmp_path / "push.json"
    push.write_text(json.dumps({"ref": "refs/heads/main", "after": "a" * 40, "repository": {"default_branch": "main"}}))
    monkeypatch.setenv("GITHUB_EVENT_NAME", "push")
    monkeypatch.setenv("GITHUB_EVENT_PATH", str(push))
    monkeypatch.setenv("GITHUB_REF", "refs/heads/main")
    capsys.readouterr()
    assert (
        main(
            ["merge", str(tmp_path / "s1" / "results.json"), "--config", config, "--output-dir", str(tmp_path / "half")]
        )
        == 1
    )
    captured = capsys.readouterr()
    assert "the baseline was not stored" in captured.err and "of the suite's 6 cases" in captured.err
    assert baseline.read_bytes() == before
    whole = json.loads(before)
    whole["interrupted"], whole["stop_reason"] = True, "SIGTERM"
    (tmp_path / "cut.json").write_text(json.dumps(whole))
    assert main(["merge", str(tmp_path / "cut.json"), "--config", config, "--output-dir", str(tmp_path / "cut")]) == 1
    assert "the run stopped early (SIGTERM)" in capsys.readouterr().err
    assert baseline.read_bytes() == before
    assert main(["baseline", "update", "--config", config, "--results", str(tmp_path / "cut.json")]) == 2


@pytest.fixture
def fork_artifact(example, tmp_path, monkeypatch):
    """What the untrusted pull_request run of a fork uploads: its output directory, nothing posted."""
    for key in ("GITHUB_STEP_SUMMARY", "GITHUB_OUTPUT", "GITHUB_ACTIONS", "GITHUB_TOKEN"):
        monkeypatch.delenv(key, raising=False)
    event = tmp_path / "pr.json"
    event.write_text(
        json.dumps({"pull_request": {"number": 7, "head": {"sha": HEAD}, "base": {"sha": "b" * 40, "ref": "main"}}})
    )
    monkeypatch.setenv("GITHUB_EVENT_PATH", str(event))
    monkeypatch.setenv("GITHUB_EVENT_NAME", "pull_request")
    out = tmp_path / "artifact"
    assert main(["ci", "--config", str(example / "eval-gate.yml"), "--output-dir", str(out), "--quiet"]) == 0
    assert json.loads((out / "pull-request.json").read_text())["number"] == 7
    return out


def trusted_context(fake, head=HEAD) -> ActionsContext:
    return ActionsContext(
        api_url=fake.url,
        repository="o/r",
        token="write-token",
        event_name="workflow_run",
        event={
            "workflow_run": {
                "id": 555,
                "head_sha": head,
                "run_attempt": 1,
                "event": "pull_request",
                "html_url": "https://github.com/o/r/actions/runs/555",
            },
            "repository": {"default_branch": "main"},
        },
    )


def publish(fork_artifact, fake, example) -> int:
    """The trusted workflow's call: the base branch's config (here, the example's own) judges the artifact."""
    out = fork_artifact.parent / "published"
    return run_publish(
        str(fork_artifact), str(example / "eval-gate.yml"), context=trusted_context(fake), output_dir=str(out)
    )


def test_publish_posts_the_report_after_checking_the_pull_request_head(fork_artifact, example):
    with FakeGitHub() as fake:
        fake.add_pull(7, HEAD)
        assert publish(fork_artifact, fake, example) == 0
        (comment,) = fake.state.comments[7]
        assert "adk-eval-gate passed" in comment["body"] and "actions/runs/555" in comment["body"]
        assert "baseline bed8e88d6e24" in comment["body"]  # the trusted config's baseline file was compared
        assert fake.state.schema_errors == []


def test_publish_refuses_a_pull_request_whose_head_is_another_commit(fork_artifact, example, capsys):
    with FakeGitHub() as fake:
        fake.add_pull(7, "e" * 40)  # the artifact claims #7, but #7 is not what this run evaluated
        assert publish(fork_artifact, fake, example) == 1
        assert fake.state.comments.get(7, []) == [] and "nothing was posted" in capsys.readouterr().err


def test_publish_escapes_whatever_the_untrusted_run_wrote(fork_artifact, example):
    results = json.loads((fork_artifact / "results.json").read_text())
    results["eval_sets"][0]["cases"][0]["reason"] = "@everyone <img src=x onerror=alert(1)> see [here](https://evil)"
    results["eval_sets"][0]["cases"][0]["status"] = "error"
    (fork_artifact / "results.json").write_text(json.dumps(results))
    (fork_artifact / "report.md").write_text("@everyone raw markdown that must not be posted")
    with FakeGitHub() as fake:
        fake.add_pull(7, HEAD)
        assert publish(fork_artifact, fake, example) == 1  # an error case fails the trusted gate
        body = fake.state.comments[7][0]["body"]
        assert "@\u200beveryone" in body and "<img" not in body and "raw markdown" not in body and "\\[here\\]" in body


def test_publish_ignores_a_tampered_comparison(fork_artifact, example, capsys):
    comparison = json.loads((fork_artifact / "comparison.json").read_text())
    comparison["verdict"] = "<script>"
    (fork_artifact / "comparison.json").write_text(json.dumps(comparison))
    with FakeGitHub() as fake:
        fake.add_pull(7, HEAD)
        assert publish(fork_artifact, fake, example) == 0
        assert "<script>" not in fake.state.comments[7][0]["body"]
        assert "comparison.json is not a comparison file; it was ignored" in capsys.readouterr().err
