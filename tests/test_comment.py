"""The sticky PR comment against the fake GitHub API: create once, update in place, never duplicate."""

from __future__ import annotations

import pytest

from adk_eval_gate.github.client import GitHubClient
from adk_eval_gate.github.comment import marker, publish_comment

from .fake_github import USER, FakeGitHub


@pytest.fixture
def fake():
    with FakeGitHub() as server:
        yield server
        assert server.state.schema_errors == [], server.state.schema_errors


def client(fake, token="t"):
    return GitHubClient(fake.url, token, backoff=0.001)


def publish(fake, body="report", run_id=10, token="t", **kwargs):
    return publish_comment(client(fake, token), "o/r", 7, body, key="eval-gate.yml", run_id=run_id, **kwargs)


def test_first_run_creates_second_updates_without_duplicates(fake):
    first = publish(fake, "first report")
    assert first.action == "created" and first.url.startswith("https://github.com/o/r/pull/7#issuecomment-")
    second = publish(fake, "second report", run_id=11)
    assert second.action == "updated" and second.url == first.url
    comments = fake.state.comments[7]
    assert len(comments) == 1 and comments[0]["body"].startswith(marker("eval-gate.yml")) and comments[0]["body"].endswith("second report")


def test_finds_its_comment_among_150_through_pagination(fake):
    for i in range(149):
        fake.make_comment(7, f"review comment {i}", fake.url)
    publish(fake, "ours")
    for i in range(10):
        fake.make_comment(7, f"later comment {i}", fake.url)
    assert publish(fake, "ours again", run_id=11).action == "updated"
    assert sum(marker("eval-gate.yml") in c["body"] for c in fake.state.comments[7]) == 1
    assert any(r["query"].get("page") == "2" for r in fake.state.requests)  # the lookup really paged


def test_a_person_quoting_the_marker_is_never_overwritten(fake):
    fake.make_comment(7, marker("eval-gate.yml") + "\nI copied this", fake.url, user={**USER, "login": "octocat", "type": "User"})
    assert publish(fake).action == "created"
    assert fake.state.comments[7][0]["body"].endswith("I copied this")


def test_an_older_run_never_overwrites_a_newer_one(fake):
    publish(fake, "newer", run_id=20)
    older = publish(fake, "older", run_id=19)
    assert older.action == "skipped-newer" and "newer run (20)" in older.warning
    assert fake.state.comments[7][0]["body"].endswith("newer")


def test_separate_keys_get_separate_comments(fake):
    publish(fake, "config A")
    publish_comment(client(fake), "o/r", 7, "config B", key="other.yml", run_id=10)
    assert len(fake.state.comments[7]) == 2


def test_read_only_token_warns_instead_of_failing(fake):
    outcome = publish(fake, token="read-only-token")
    assert outcome.action == "skipped-no-permission" and "read-only token" in outcome.warning and outcome.url is None


def test_5xx_is_retried(fake):
    fake.fault("POST", "/comments$", 502, times=2)
    assert publish(fake).action == "created"
    assert len(fake.calls("POST", "/comments$")) == 3


def test_a_body_over_the_limit_is_never_sent(fake):
    with pytest.raises(ValueError, match="was not sent"):
        publish(fake, "x" * 70_000)
    assert fake.state.requests == []
