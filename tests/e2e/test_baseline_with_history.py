"""On the branch store a push writes three files through the contents API (the history, the baseline, the pointer
to it): when a later write fails, the earlier ones are put back, so the baseline and its history record advance
together or neither does, and the job says which."""

from __future__ import annotations

import json

from tests.support.fake_github import FakeGitHub
from tests.support.history_repo import SHA, ci_push, history_json, make_repo

BRANCH_STORE = "{store: branch, branch: eval-data}"
HISTORY = ("eval-data", "baselines/history.db")
LATEST = ("eval-data", "baselines/latest.json")


def test_a_failed_pointer_write_puts_the_history_and_the_baseline_back(tmp_path, monkeypatch, capsys):
    config = make_repo(tmp_path / "repo", BRANCH_STORE, cases=3)
    with FakeGitHub() as fake:
        assert ci_push(monkeypatch, fake, tmp_path, config, SHA[0], tmp_path / "p0") == 0
        history = fake.state.files[HISTORY]
        fake.fault("PUT", r"latest\.json$", 403, body={"message": "Resource not accessible by integration"})
        capsys.readouterr()
        assert ci_push(monkeypatch, fake, tmp_path, config, SHA[1], tmp_path / "p1") == 1
        err = capsys.readouterr().err
        assert fake.state.files[HISTORY] == history, "the history advanced without its baseline"
        assert ("eval-data", f"baselines/{SHA[1]}.json") not in fake.state.files
        assert json.loads(fake.state.files[LATEST])["sha"] == SHA[0]
        assert "neither the baseline nor the history was stored" in err and "nothing was changed" in err
        assert not (tmp_path / "p1" / "history.json").exists()
        # The next push stores both, as if the failed one had never run.
        assert ci_push(monkeypatch, fake, tmp_path, config, SHA[2], tmp_path / "p2") == 0
        records = history_json(fake.state.files[HISTORY])["records"]
        assert [r["sha"] for r in records] == [SHA[0], SHA[2]]


def test_the_first_push_whose_baseline_fails_leaves_no_history_behind(tmp_path, monkeypatch, capsys):
    config = make_repo(tmp_path / "repo", BRANCH_STORE, cases=3)
    with FakeGitHub() as fake:
        fake.fault("PUT", rf"{SHA[0]}\.json$", 403, body={"message": "Resource not accessible by integration"})
        assert ci_push(monkeypatch, fake, tmp_path, config, SHA[0], tmp_path / "p0") == 1
        assert HISTORY not in fake.state.files and LATEST not in fake.state.files
        assert [c["method"] for c in fake.calls(pattern=r"history\.db$") if c["method"] != "GET"] == ["PUT", "DELETE"]
        assert fake.state.schema_errors == []  # the DELETE is the one GitHub's API describes
        assert "nothing was changed" in capsys.readouterr().err


def test_a_rollback_that_fails_too_is_said(tmp_path, monkeypatch, capsys):
    config = make_repo(tmp_path / "repo", BRANCH_STORE, cases=3)
    with FakeGitHub() as fake:
        assert ci_push(monkeypatch, fake, tmp_path, config, SHA[0], tmp_path / "p0") == 0
        fake.fault("PUT", r"latest\.json$", 403, body={"message": "Resource not accessible by integration"})
        fake.fault("DELETE", rf"{SHA[1]}\.json$", 403, body={"message": "Resource not accessible by integration"})
        capsys.readouterr()
        assert ci_push(monkeypatch, fake, tmp_path, config, SHA[1], tmp_path / "p1") == 1
        err = capsys.readouterr().err
        assert f"baselines/{SHA[1]}.json could not be put back" in err and "nothing was changed" not in err


def test_an_artifact_whose_history_cannot_be_used_uploads_no_new_baseline(tmp_path, monkeypatch, capsys):
    config = make_repo(tmp_path / "repo", "{store: artifact, name: adk-eval-gate-results}", cases=3)
    with FakeGitHub() as fake:
        first = tmp_path / "p0"
        assert ci_push(monkeypatch, fake, tmp_path, config, SHA[0], first) == 0
        fake.add_run(500, SHA[0], "2026-11-01T00:00:00Z")
        broken = {"results.json": (first / "results.json").read_bytes(), "history.json": b'{"schema_version": 1'}
        fake.add_artifact(900, 500, "adk-eval-gate-results", broken)
        capsys.readouterr()
        out = tmp_path / "p1"
        assert ci_push(monkeypatch, fake, tmp_path, config, SHA[1], out) == 1
        err = capsys.readouterr().err
        # The upload step finds no results.json to carry as the new baseline: the next run compares with run 500's.
        assert not (out / "results.json").exists() and (out / "results.json.unrecorded").is_file()
        assert not (out / "history.json").exists()
        assert "neither the baseline nor the history was stored" in err and "moved to results.json.unrecorded" in err
