"""The sticky PR comment against the fake GitHub API: create once, update in place, never duplicate, never touch
a comment that is not ours. Each identity GitHub has: the workflow's GITHUB_TOKEN (`t`, github-actions[bot]), a
user's personal access token (octocat) and another App's installation token (eval-bot[bot])."""

from __future__ import annotations

import pytest

from adk_eval_gate.github.client import GitHubClient, Patience
from adk_eval_gate.handshake.ours import CommentPolicy, marker
from adk_eval_gate.publish.comment import CommentTarget, publish_comment
from tests.support.fake_github import USER, FakeGitHub, user

PAT, APP = "ghp_userPat", "ghs_otherApp"
TOKENS = pytest.mark.parametrize("token", ["t", PAT], ids=["installation-token", "user-token"])


@pytest.fixture
def fake():
    with FakeGitHub() as server:
        yield server
        assert server.state.schema_errors == [], server.state.schema_errors


def client(fake, token="t"):
    return GitHubClient(fake.url, token, patience=Patience(backoff=0.001))


def publish(fake, body="report", run_id=10, token="t", failing=False, **kwargs):
    target = CommentTarget(7, "eval-gate.yml", run_id=run_id, **kwargs)
    return publish_comment(client(fake, token), "o/r", body, target, failing=failing)


@TOKENS
def test_first_run_creates_second_updates_without_duplicates(fake, token):
    first = publish(fake, "first report", token=token)
    assert first.action == "created" and first.url.startswith("https://github.com/o/r/pull/7#issuecomment-")
    second = publish(fake, "second report", run_id=11, token=token)
    assert second.action == "updated" and second.url == first.url
    comments = fake.state.comments[7]
    assert (
        len(comments) == 1
        and comments[0]["body"].startswith(marker("eval-gate.yml"))
        and comments[0]["body"].endswith("second report")
    )


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
    fake.make_comment(
        7, marker("eval-gate.yml") + "\nI copied this", fake.url, user={**USER, "login": "octocat", "type": "User"}
    )
    assert publish(fake).action == "created"
    assert fake.state.comments[7][0]["body"].endswith("I copied this")


@pytest.mark.parametrize("token", ["t", PAT, APP])
def test_someone_elses_marker_comment_is_never_edited_and_never_blocks_ours(fake, token):
    # a newer run id in the forged stamp must not silence us either
    forged = marker("eval-gate.yml") + "\n<!-- adk-eval-gate-run: 999.1 -->\nforged"
    for login, kind in (
        ("mallory", "User"),
        ("github-actions[bot]", "Bot"),
        ("octocat", "User"),
        ("eval-bot[bot]", "Bot"),
    ):
        fake.make_comment(7, forged, fake.url, user=user(login, kind))
    author = {"t": "github-actions[bot]", PAT: "octocat", APP: "eval-bot[bot]"}[token]
    others = [c["id"] for c in fake.state.comments[7] if c["user"]["login"] != author]
    policy = CommentPolicy(author="eval-bot[bot]") if token == APP else CommentPolicy()
    theirs = next(c for c in fake.state.comments[7] if c["user"]["login"] == author)
    fake.state.comments[7].remove(theirs)  # leave only comments by others
    assert publish(fake, "ours", token=token, policy=policy).action == "created"
    assert publish(fake, "ours again", run_id=11, token=token, policy=policy).action == "updated"
    mine = [c for c in fake.state.comments[7] if c["user"]["login"] == author]
    assert len(mine) == 1 and mine[0]["body"].endswith("ours again")
    assert all(c["body"].endswith("forged") for c in fake.state.comments[7] if c["id"] in others)
    assert not [r for r in fake.calls("PATCH") + fake.calls("DELETE") if int(r["path"].rsplit("/", 1)[1]) in others]


def test_a_user_token_finds_its_comment_through_get_user(fake):
    publish(fake, "first", token=PAT)
    assert fake.state.comments[7][0]["user"]["login"] == "octocat"
    assert publish(fake, "second", run_id=11, token=PAT).action == "updated"
    assert len(fake.state.comments[7]) == 1 and len(fake.calls("GET", "^/user$")) == 2


def test_an_installation_token_is_the_workflow_bot_when_get_user_is_refused(fake):
    publish(fake, "first")
    publish(fake, "second", run_id=11)
    (comment,) = fake.state.comments[7]
    assert comment["user"]["login"] == "github-actions[bot]" and comment["body"].endswith("second")
    assert fake.calls("GET", "^/user$")  # it asked, GitHub said 403, the run went on


def test_another_apps_token_with_its_author_configured_keeps_one_comment(fake):
    policy = CommentPolicy(author="eval-bot[bot]")
    assert publish(fake, "first", token=APP, policy=policy).warning is None
    assert publish(fake, "second", run_id=11, token=APP, policy=policy).action == "updated"
    assert len(fake.state.comments[7]) == 1 and fake.calls("GET", "^/user$") == []


def test_another_apps_token_without_its_author_says_which_login_to_configure(fake):
    outcome = publish(fake, "first", token=APP)
    assert outcome.action == "created" and "posts as eval-bot[bot]" in outcome.warning
    assert 'comment: {author: "eval-bot[bot]"}' in outcome.warning and "comment-author input" in outcome.warning


@pytest.mark.parametrize("token", ["t", PAT, APP], ids=["installation-token", "user-token", "unnamed-app-token"])
@pytest.mark.parametrize("drop", [False, True], ids=["502", "connection-dropped"])
def test_a_create_whose_reply_was_lost_never_makes_a_second_comment(fake, token, drop):
    fake.fault("POST", "/comments$", 502, after_effect=True, drop=drop)
    outcome = publish(fake, "report", token=token)
    assert outcome.action == "created" and outcome.url.startswith("https://github.com/o/r/pull/7#issuecomment-")
    (comment,) = fake.state.comments[7]
    assert comment["body"].endswith("report") and len(fake.calls("POST", "/comments$")) == 1


def test_recreate_deletes_ours_only_and_posts_anew(fake):
    first = publish(fake, "first")
    fake.make_comment(7, marker("eval-gate.yml") + "\nquoted", fake.url, user=user("octocat"))
    fake.make_comment(7, "a review", fake.url, user=user("octocat"))
    second = publish(fake, "second", run_id=11, policy=CommentPolicy(mode="recreate"))
    assert second.action == "recreated" and second.url != first.url
    bodies = [c["body"] for c in fake.state.comments[7]]
    assert bodies[:2] == [marker("eval-gate.yml") + "\nquoted", "a review"] and bodies[2].endswith("second")
    assert len(fake.calls("DELETE")) == 1


def test_when_changed_leaves_an_unchanged_report_alone(fake):
    policy = CommentPolicy(when="changed")
    assert publish(fake, "run 1 link", digest="aaaa", policy=policy).action == "created"
    skipped = publish(fake, "run 2 link", run_id=11, digest="aaaa", policy=policy)
    assert skipped.action == "skipped-unchanged" and fake.state.comments[7][0]["body"].endswith("run 1 link")
    assert publish(fake, "run 3 link", run_id=12, digest="bbbb", policy=policy).action == "updated"
    assert fake.state.comments[7][0]["body"].endswith("run 3 link")


def test_when_failing_posts_only_on_failure_but_corrects_its_comment_when_it_passes(fake):
    policy = CommentPolicy(when="failing")
    passing = publish(fake, "passes", policy=policy, failing=False)
    assert passing.action == "skipped-passing" and fake.state.comments.get(7, []) == []
    assert publish(fake, "fails", run_id=11, policy=policy, failing=True).action == "created"
    assert publish(fake, "passes now", run_id=12, policy=policy, failing=False).action == "updated"
    assert fake.state.comments[7][0]["body"].endswith("passes now")


def test_an_older_run_never_overwrites_a_newer_one(fake):
    publish(fake, "newer", run_id=20)
    older = publish(fake, "older", run_id=19)
    assert older.action == "skipped-newer" and "newer run (20)" in older.warning
    assert fake.state.comments[7][0]["body"].endswith("newer")


def test_separate_keys_get_separate_comments(fake):
    publish(fake, "config A")
    publish_comment(client(fake), "o/r", "config B", CommentTarget(7, "other.yml", run_id=10))
    assert len(fake.state.comments[7]) == 2


def test_read_only_token_warns_instead_of_failing(fake):
    outcome = publish(fake, token="read-only-token")
    assert outcome.action == "skipped-no-permission" and "read-only token" in outcome.warning and outcome.url is None


def test_a_5xx_that_stored_nothing_is_posted_again_after_looking(fake):
    fake.fault("POST", "/comments$", 502, times=2)
    assert publish(fake).action == "created"
    assert len(fake.calls("POST", "/comments$")) == 3 and len(fake.state.comments[7]) == 1
    assert len(fake.calls("GET", "/comments$")) == 3  # the first lookup, then one before each re-post


def test_a_body_over_the_limit_is_never_sent(fake):
    with pytest.raises(ValueError, match="was not sent"):
        publish(fake, "x" * 70_000)
    assert fake.state.requests == []


def test_any_configured_identity_is_honoured(fake):
    fake.identify("ghp_another", "hubot", kind="User")
    fake.identify("ghs_deploy", "deploy-app[bot]", kind="Bot", installation=True)
    assert publish(fake, "from a user", token="ghp_another").action == "created"
    assert (
        publish(fake, "from an app", token="ghs_deploy", policy=CommentPolicy(author="deploy-app[bot]")).action
        == "created"
    )
    assert publish(fake, "user again", run_id=11, token="ghp_another").action == "updated"
    by = {c["user"]["login"]: c["body"] for c in fake.state.comments[7]}
    assert by["hubot"].endswith("user again") and by["deploy-app[bot]"].endswith("from an app") and len(by) == 2
    assert fake.state.comments[7][1]["user"]["type"] == "Bot"


@TOKENS
def test_duplicates_of_ours_are_folded_into_one_and_nobody_elses_are_touched(fake, token):
    author = user("octocat") if token == PAT else USER
    for text in ("raced 1", "raced 2"):  # two runs that created at once, or an older version's duplicates
        fake.make_comment(7, marker("eval-gate.yml") + "\n" + text, fake.url, user=author)
    fake.make_comment(7, marker("eval-gate.yml") + "\nquoted", fake.url, user=user("mallory"))
    assert publish(fake, "one", token=token).action == "updated"
    bodies = [c["body"] for c in fake.state.comments[7]]
    assert (
        len(bodies) == 2 and bodies[0].endswith("\none") and bodies[1].endswith("\nquoted")
    )  # the newest of ours kept
