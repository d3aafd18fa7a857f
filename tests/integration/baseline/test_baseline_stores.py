"""Baseline stores over real HTTP against the fake GitHub API (routes and payloads checked against the REST slice)."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone

import pytest

from adk_eval_gate.baseline.stores import build_store
from adk_eval_gate.commands.main import main
from adk_eval_gate.config.loader import load_workflow
from adk_eval_gate.config.workflow_settings import GateSettings
from adk_eval_gate.gate.comparison_file import build_comparison
from adk_eval_gate.github.client import GitHubClient, GitHubError, Patience
from adk_eval_gate.github.context import ActionsContext
from adk_eval_gate.run.pipeline import run_plan
from adk_eval_gate.run.plan import build_plan
from tests.support.fake_github import FakeGitHub

HEAD, BASE, OLD = "c" * 40, "b" * 40, "d" * 40


@pytest.fixture
def fake():
    with FakeGitHub() as server:
        yield server
        assert server.state.schema_errors == [], server.state.schema_errors


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    import shutil

    from tests.conftest import EXAMPLE

    root = tmp_path_factory.mktemp("res")
    shutil.copytree(EXAMPLE, root / "ex", ignore=shutil.ignore_patterns("__pycache__", ".adk"))
    return run_plan(build_plan(root / "ex" / "eval-gate.yml"), quiet=True)


def at(results, sha: str, days_ago: float = 0.0):
    copy = results.model_copy(deep=True)
    copy.git.sha = sha
    copy.timings.finished_at = (datetime.now(timezone.utc) - timedelta(days=days_ago)).isoformat(timespec="seconds")
    return copy


def context(fake, *, base_sha: str | None = BASE, token: str = "t", sha: str = HEAD) -> ActionsContext:
    event = {"pull_request": {"number": 7, "base": {"sha": base_sha, "ref": "main"}, "labels": []}} if base_sha else {}
    return ActionsContext(
        api_url=fake.url,
        repository="o/r",
        token=token,
        event_name="pull_request" if base_sha else "push",
        event=event,
        sha=sha,
        base_ref="main" if base_sha else None,
    )


def store_for(example, fake, kind: str = "branch", **ctx):
    config = example / "eval-gate.yml"
    section = {
        "branch": "baseline: {store: branch, branch: eval-data}\n",
        "artifact": "baseline: {store: artifact, name: eval-results}\n",
    }[kind]
    kept = [line for line in config.read_text().splitlines(keepends=True) if not line.startswith("baseline:")]
    config.write_text(section + "".join(kept))
    store = build_store(load_workflow(config), context(fake, **ctx))
    store.client = GitHubClient(fake.url, ctx.get("token", "t"), patience=Patience(backoff=0.001))
    return store


def test_first_run_with_no_data_branch_has_no_baseline_and_everything_is_new(example, fake, results):
    outcome = store_for(example, fake).load()
    assert outcome.baseline is None and "no baseline on branch eval-data yet" in outcome.warnings[0]
    comparison = build_comparison(results, outcome, GateSettings())
    assert comparison.verdict == "pass" and {r.verdict for r in comparison.rows} == {"new"}


def test_push_writes_one_file_per_commit_and_a_latest_pointer(example, fake, results):
    store = store_for(example, fake, base_sha=None, sha=BASE)
    where = store.save(at(results, BASE))
    assert where == f"branch eval-data: baselines/{BASE}.json"
    assert fake.calls("POST", "/git/refs")[0]["body"] == {"ref": "refs/heads/eval-data", "sha": BASE}
    stored = fake.file("eval-data", f"baselines/{BASE}.json")
    assert stored["git"]["sha"] == BASE
    assert all(run["actual_invocations"] is None for s in stored["eval_sets"] for c in s["cases"] for run in c["runs"])
    assert fake.file("eval-data", "baselines/latest.json")["path"] == f"baselines/{BASE}.json"
    store.save(at(results, OLD))  # a second push updates latest.json in place (PUT with the blob sha)
    assert fake.file("eval-data", "baselines/latest.json")["sha"] == OLD
    assert "sha" in fake.calls("PUT", "latest.json")[-1]["body"]


def test_pull_request_reads_its_merge_base_entry(example, fake, results):
    store_for(example, fake, base_sha=None, sha=BASE).save(at(results, BASE))
    store_for(example, fake, base_sha=None, sha=OLD).save(at(results, OLD))
    outcome = store_for(example, fake).load()
    assert outcome.warnings == []
    assert outcome.baseline.identity.sha == BASE and outcome.baseline.identity.exact_base


def test_missing_merge_base_entry_falls_back_to_latest_with_its_age(example, fake, results):
    store_for(example, fake, base_sha=None, sha=OLD).save(at(results, OLD, days_ago=20))
    outcome = store_for(example, fake).load()
    assert outcome.baseline.identity.sha == OLD and not outcome.baseline.identity.exact_base
    assert (
        "no baseline for this pull request's merge-base; using the newest, from dddddddddddd, 20.0 days old"
        in outcome.warnings[0]
    )
    comparison = build_comparison(results, outcome, GateSettings(), max_age_days=14)
    assert any("the baseline is 20 days old" in w for w in comparison.warnings)


def test_5xx_and_secondary_rate_limits_are_retried(example, fake, results):
    store_for(example, fake, base_sha=None, sha=BASE).save(at(results, BASE))
    fake.fault("GET", "/contents/", 502, times=2)
    fake.fault(
        "GET",
        "/contents/",
        403,
        times=1,
        headers={"Retry-After": "0"},
        body={"message": "You have exceeded a secondary rate limit"},
    )
    outcome = store_for(example, fake).load()
    assert outcome.baseline is not None and outcome.baseline.identity.sha == BASE


def test_persistent_errors_leave_no_baseline_and_a_clear_warning(example, fake, results):
    fake.fault("GET", "/contents/", 503, times=50)
    outcome = store_for(example, fake).load()
    assert (
        outcome.baseline is None
        and "baseline unavailable: GitHub API GET" in outcome.warnings[0]
        and "HTTP 503" in outcome.warnings[0]
    )
    fake.state.faults.clear()
    fake.fault("GET", "/contents/", 403, times=50, body={"message": "Resource not accessible by integration"})
    outcome = store_for(example, fake).load()
    assert "HTTP 403" in outcome.warnings[0] and "Resource not accessible" in outcome.warnings[0]


def test_read_only_token_cannot_update_and_says_why(example, fake, results):
    store = store_for(example, fake, base_sha=None, sha=BASE, token="read-only-token")
    with pytest.raises(GitHubError) as error:
        store.save(at(results, BASE))
    assert error.value.read_only and error.value.status == 403
    assert "read-only-token" not in str(error.value)


def test_concurrent_update_conflict_is_retried(example, fake, results):
    store = store_for(example, fake, base_sha=None, sha=BASE)
    store.save(at(results, BASE))
    fake.fault("PUT", "latest.json", 409, times=1, body={"message": "latest.json does not match"})
    store.save(at(results, OLD))
    assert fake.file("eval-data", "baselines/latest.json")["sha"] == OLD


def test_artifact_store_prefers_the_merge_base_run_and_skips_expired_artifacts(example, fake, results):
    fake.add_run(11, BASE, "2026-11-18T10:00:00Z")
    fake.add_run(12, OLD, "2026-11-21T10:00:00Z")
    fake.add_run(13, HEAD, "2026-11-21T11:00:00Z", conclusion="failure")
    fake.add_artifact(101, 11, "eval-results", {"results.json": at(results, BASE).model_dump_json().encode()})
    fake.add_artifact(102, 12, "eval-results", {"results.json": at(results, OLD).model_dump_json().encode()})
    outcome = store_for(example, fake, kind="artifact").load()
    assert outcome.baseline.identity.sha == BASE and outcome.warnings == []
    fake.state.artifacts[101]["expired"] = True
    outcome = store_for(example, fake, kind="artifact").load()
    assert (
        outcome.baseline.identity.sha == OLD
        and "no baseline run at this pull request's merge-base" in outcome.warnings[0]
    )
    assert fake.calls("GET", "/actions/runs$")[0]["query"] == {"branch": "main", "event": "push", "per_page": "50"}


def test_artifact_store_takes_the_newest_run_with_the_artifact_whatever_its_conclusion(example, fake, results):
    # run 11 passed; run 12 failed its gate (an accepted regression) but uploaded; run 13 died before uploading
    fake.add_run(11, OLD, "2026-11-18T10:00:00Z")
    fake.add_run(12, BASE, "2026-11-21T10:00:00Z", conclusion="failure")
    fake.add_run(13, HEAD, "2026-11-22T10:00:00Z", conclusion="cancelled")
    fake.add_artifact(101, 11, "eval-results", {"results.json": at(results, OLD).model_dump_json().encode()})
    fake.add_artifact(102, 12, "eval-results", {"results.json": at(results, BASE).model_dump_json().encode()})
    outcome = store_for(example, fake, kind="artifact", base_sha="e" * 40).load()
    assert outcome.baseline.identity.sha == BASE and "using run 12" in outcome.warnings[0]
    assert fake.calls("GET", "/runs/13/artifacts$")  # the newest run was looked at first, and had nothing


def test_artifact_store_with_no_runs_and_with_errors(example, fake):
    assert "no push run on main" in store_for(example, fake, kind="artifact").load().warnings[0]
    fake.fault("GET", "/actions/runs", 500, times=50)
    assert "baseline unavailable" in store_for(example, fake, kind="artifact").load().warnings[0]


def test_compare_cli_reads_the_branch_store_from_the_actions_environment(
    example, fake, results, tmp_path, monkeypatch, capsys
):
    store_for(example, fake, base_sha=None, sha=BASE).save(at(results, BASE))
    event = tmp_path / "event.json"
    event.write_text(
        json.dumps(
            {
                "pull_request": {
                    "number": 7,
                    "head": {"sha": HEAD},
                    "base": {"sha": BASE, "ref": "main"},
                    "labels": [{"name": "adk-eval-gate: accept regression"}],
                }
            }
        )
    )
    for key, value in {
        "GITHUB_API_URL": fake.url,
        "GITHUB_REPOSITORY": "o/r",
        "GITHUB_TOKEN": "ghs_s3cr3tTok",
        "GITHUB_EVENT_PATH": str(event),
        "GITHUB_EVENT_NAME": "pull_request",
        "GITHUB_BASE_REF": "main",
        "GITHUB_SHA": HEAD,
    }.items():
        monkeypatch.setenv(key, value)
    current = tmp_path / "current.json"
    current.write_text(results.model_dump_json())
    before = len(fake.state.requests)
    assert (
        main(
            [
                "compare",
                "--results",
                str(current),
                "--config",
                str(example / "eval-gate.yml"),
                "--output",
                str(tmp_path / "c.json"),
            ]
        )
        == 0
    )
    data = json.loads((tmp_path / "c.json").read_text())
    assert data["baseline"]["sha"] == BASE and data["baseline"]["source"].startswith("branch eval-data")
    assert {c["token"] for c in fake.state.requests[before:]} == {"ghs_s3cr3tTok"}  # the token reached GitHub ...
    captured = capsys.readouterr()
    assert (
        "ghs_s3cr3tTok" not in captured.out + captured.err + (tmp_path / "c.json").read_text()
    )  # ... and nothing else


def test_file_store_update_and_show_through_the_cli(example, results, tmp_path, capsys):
    config = example / "eval-gate.yml"
    kept = [line for line in config.read_text().splitlines(keepends=True) if not line.startswith("baseline:")]
    config.write_text("baseline: {store: file, path: blessed/results.json}\n" + "".join(kept))
    current = tmp_path / "current.json"
    current.write_text(at(results, BASE).model_dump_json())
    assert main(["baseline", "show", "--config", str(config)]) == 0
    assert "no baseline" in capsys.readouterr().out
    assert main(["baseline", "update", "--config", str(config), "--results", str(current)]) == 0
    stored = json.loads((example / "blessed" / "results.json").read_text())
    assert stored["git"]["sha"] == BASE and stored["eval_sets"][0]["cases"][0]["runs"][0]["actual_invocations"] is None
    assert main(["baseline", "show", "--config", str(config)]) == 0
    shown = capsys.readouterr().out
    assert f"commit {BASE}" in shown and "hello_world/dice: 6 cases, 4 passed" in shown
    assert (
        main(["compare", "--results", str(current), "--config", str(config), "--output", str(tmp_path / "c.json")]) == 0
    )
    assert json.loads((tmp_path / "c.json").read_text())["baseline"]["sha"] == BASE


def test_an_artifact_that_decompresses_past_its_budget_is_a_warning_not_the_memory(example, fake, results):
    """A zip bomb's member claims any size: each read stops at what the artifact's budget has left (issue #34)."""
    import io
    import zipfile

    from adk_eval_gate.baseline.stores import artifact as store

    fake.add_run(11, BASE, "2026-11-18T10:00:00Z")
    fake.add_artifact(101, 11, "eval-results", {})
    bomb = io.BytesIO()
    with zipfile.ZipFile(bomb, "w", zipfile.ZIP_DEFLATED) as archive:
        with archive.open("history.json", "w", force_zip64=True) as member:  # 513 MiB of zeros, written by MiB
            for _ in range(store.MAX_FILE_BYTES // 2**20 + 1):
                member.write(bytes(2**20))
        archive.writestr("results.json", at(results, BASE).model_dump_json().encode())
    fake.state.artifacts[101]["_zip"] = bomb.getvalue()
    fake.state.artifacts[101]["size_in_bytes"] = len(bomb.getvalue())
    assert len(bomb.getvalue()) < 2 * 1024 * 1024
    outcome = store_for(example, fake, kind="artifact").load()
    assert outcome.baseline is None
    assert f"history.json in the artifact decompresses past {store.MAX_FILE_BYTES} bytes" in outcome.warnings[0]
    fake.state.artifacts[101]["size_in_bytes"] = store.MAX_ARCHIVE_BYTES + 1  # refused before the download
    outcome = store_for(example, fake, kind="artifact").load()
    assert outcome.baseline is None and "over the 536870912 byte limit" in outcome.warnings[0]
