"""`/eval update-goldens <full sha>` against the fake GitHub: a maintainer's command evaluates the named head and
pushes ONE commit with the golden update through the Git Data API (blobs, a tree, a commit, a fast-forward ref
update) whose message names who asked, and the reply shows the diff; hostile commenters, short shas, forks without
their author's consent and a branch that moved push nothing."""

from __future__ import annotations

import base64
import hashlib
import json

import pytest

from adk_eval_gate.github.client import GitHubClient
from adk_eval_gate.github.commands import CommandError, parse_command
from adk_eval_gate.github.git_data import FileUpdate, PushRefused, push_commit
from tests.e2e.test_comment_commands import AT, replies, repository, run_comment
from tests.support.fake_github import FakeGitHub


@pytest.fixture
def fake():
    with FakeGitHub() as server:
        yield server
        assert server.state.schema_errors == [], server.state.schema_errors


def _pull(fake: FakeGitHub, head: str, repo: str = "o/r", consent: bool = False) -> None:
    fake.add_pull(7, head)
    fake.state.pulls[7]["head"]["repo"]["full_name"] = repo
    fake.state.pulls[7]["maintainer_can_modify"] = consent


def _git_writes(fake: FakeGitHub) -> list[dict]:
    return [c for c in fake.calls() if "/git/" in c["path"] and c["method"] != "GET"]


def test_a_maintainer_updates_the_goldens_in_one_pushed_commit(tmp_path, monkeypatch, fake):
    config, head = repository(tmp_path, "broken")  # the intended change: the agent answers without its tool
    _pull(fake, head)
    fake.state.permissions["maint"] = "write"
    asked = fake.comment_as(7, f"/eval update-goldens {head}", "maint", created_at=AT)
    assert run_comment(monkeypatch, fake, tmp_path, config, asked) == 0

    (patch,) = fake.calls("PATCH", r"/git/refs/")
    assert patch["path"] == "/repos/o/r/git/refs/heads/feature" and patch["body"]["force"] is False
    pushed = patch["body"]["sha"]
    commit = fake.state.git_objects[pushed]
    assert commit["parents"] == [head]
    assert "Asked by @maint with `/eval update-goldens`" in commit["message"]
    assert fake.state.pulls[7]["head"]["sha"] == pushed
    (tree,) = [fake.state.git_objects[commit["tree"]]]
    assert tree["base"] == hashlib.sha1(b"tree " + head.encode()).hexdigest()  # the fake's tree of the head
    ((path, mode, kind, blob),) = tree["entries"]
    assert (path, mode, kind) == ("evals/qa.evalset.json", "100644", "blob")
    written = fake.state.git_objects[blob]["data"]
    before = (config.parent / "evals" / "qa.evalset.json").read_bytes()  # the checkout is left as it was
    assert written != before and written.startswith(before[:20])
    cases = json.loads(written)["eval_cases"]
    assert all(c["conversation"][0]["final_response"]["parts"][0]["text"] == "I do not know." for c in cases)
    assert all(c["conversation"][0]["intermediate_data"]["tool_uses"] == [] for c in cases)
    assert len([c for c in fake.calls("POST", r"/git/commits$")]) == 1  # one commit

    reply = next(r for r in replies(fake) if "update-goldens" in r)
    assert f"pushed `{pushed}`" in reply and "@\u200bmaint" in reply and "@maint" not in reply
    assert '"The answer to question 0"' in reply and "```diff" in reply and '"I do not know."' in reply


@pytest.mark.parametrize(
    ("role", "command", "why"),
    [
        ("read", "/eval update-goldens {head}", "Only people with write access"),
        ("write", "/eval update-goldens {short}", "is a short sha"),
        ("write", "/eval update-goldens", "needs the full sha"),
        ("write", "/eval update-goldens {head} runs=5", "takes no runs="),
    ],
)
def test_nobody_without_write_access_or_a_full_sha_pushes_anything(tmp_path, monkeypatch, fake, role, command, why):
    config, head = repository(tmp_path, "broken")
    _pull(fake, head)
    fake.state.permissions["visitor"] = role
    asked = fake.comment_as(7, command.format(head=head, short=head[:12]), "visitor", created_at=AT)
    run_comment(monkeypatch, fake, tmp_path, config, asked)
    assert not (config.parent / "SETUP_RAN").exists()
    assert _git_writes(fake) == []
    assert any(why in r for r in replies(fake)), replies(fake)


def test_a_forks_branch_takes_a_push_only_with_its_authors_consent(tmp_path, monkeypatch, fake):
    config, head = repository(tmp_path, "broken")
    _pull(fake, head, repo="mallory/r", consent=False)
    fake.state.permissions["maint"] = "admin"
    asked = fake.comment_as(7, f"/eval update-goldens {head}", "maint", created_at=AT)
    run_comment(monkeypatch, fake, tmp_path, config, asked)
    assert not (config.parent / "SETUP_RAN").exists() and _git_writes(fake) == []
    assert any("has not allowed edits by maintainers" in r for r in replies(fake))

    fake.state.pulls[7]["maintainer_can_modify"] = True
    asked = fake.comment_as(7, f"/eval update-goldens {head}", "maint", created_at=AT)
    assert run_comment(monkeypatch, fake, tmp_path, config, asked, run_id=301, out="out2") == 0
    assert {c["path"].split("/git/")[0] for c in _git_writes(fake)} == {"/repos/mallory/r"}


def test_a_branch_that_moved_is_never_overwritten(fake):
    fake.add_pull(7, "c" * 40)
    fake.state.branches["release"] = "c" * 40  # the old head stays a commit GitHub knows
    client = GitHubClient(fake.url, "token")
    first = push_commit(client, "o/r", "feature", "c" * 40, [FileUpdate("a.json", b"{}\n")], "one")
    assert fake.state.pulls[7]["head"]["sha"] == first
    with pytest.raises(PushRefused, match="not a fast-forward"):
        push_commit(client, "o/r", "feature", "c" * 40, [FileUpdate("a.json", b"[]\n")], "stale")
    assert fake.state.pulls[7]["head"]["sha"] == first
    blob = fake.calls("POST", r"/git/blobs$")[0]["body"]
    assert blob["encoding"] == "base64" and base64.b64decode(blob["content"]) == b"{}\n"


@pytest.mark.parametrize(
    "body", ["/eval update-goldens abc", "/eval update-goldens cases=qa:q1", "/eval update-goldens"]
)
def test_update_goldens_names_its_commit_first(body):
    with pytest.raises(CommandError):
        parse_command(body)
    command = parse_command("/eval update-goldens " + "a" * 40 + " cases=qa:q1,q2")
    assert (command.action, command.sha, command.cases) == ("update-goldens", "a" * 40, ("qa:q1,q2",))
