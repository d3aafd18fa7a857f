"""No way in through GitHub (issue 26, part 1): commands, comments, labels and timelines, attacked end to end.

Each test is one class of attack a red-team pass made on loopback against the fake GitHub API, closed as a rule:
a commit is authorised only by its full sha; nothing the pull request can change decides which comment is ours or
which label overrides; a paginated list is read whole or is no proof; a label the API cannot confirm never
overrides; only a newly created comment is a command. The CLI runs as the Action runs it, over real HTTP, with a
real git checkout and a command-protocol agent run by the real pipeline (its setup command leaves a file behind,
so "nothing ran" is checked, not assumed).
"""

from __future__ import annotations

import hashlib
import json
import subprocess
from pathlib import Path

import pytest

from adk_eval_gate.commands.main import main
from adk_eval_gate.github.client import GitHubClient, GitHubError
from adk_eval_gate.handshake.ours import MAX_COMMENTS, Author, find_ours, marker
from adk_eval_gate.handshake.sticky import Acceptance, StickyData, data_line, read_data
from tests.e2e.test_comment_commands import (
    AFTER,
    AT,
    BEFORE,
    comment_event,
    git,
    ours,
    replies,
    repository,
    run_comment,
)
from tests.e2e.test_trust import BASE, actions_env, pull_request_event
from tests.support.fake_github import FakeGitHub

OVERRIDE = "adk-eval-gate: accept regression"


@pytest.fixture
def fake():
    with FakeGitHub() as server:
        yield server
        assert server.state.schema_errors == [], server.state.schema_errors


def with_config(config: Path, prefix: str) -> str:
    """The pull request's own config gains `prefix`, committed: the new head's sha."""
    config.write_text(prefix + config.read_text())
    git(config.parent, "commit", "-qam", "the pull request edits its config")
    return git(config.parent, "rev-parse", "HEAD")


def on_base(fake: FakeGitHub, text: str) -> None:
    """The base branch's eval-gate.yml at the pull request's base sha (the contents API serves it by that ref)."""
    fake.state.files[(BASE, "eval-gate.yml")] = text.encode()


def run_pr(monkeypatch, fake, tmp_path, config, head, run_id, *, token="ghs_workflowToken1", labels=()) -> int:
    event = pull_request_event(tmp_path / f"pr-{run_id}.json", 7, head=head)
    payload = json.loads(event.read_text())
    payload["pull_request"]["labels"] = [{"name": name} for name in labels]
    event.write_text(json.dumps(payload))
    actions_env(
        monkeypatch,
        fake,
        tmp_path,
        "pull_request",
        event,
        GITHUB_RUN_ID=str(run_id),
        GITHUB_BASE_REF="main",
        GITHUB_TOKEN=token,
        GITHUB_WORKSPACE=str(config.parent),
    )
    return main(["ci", "--config", str(config), "--output-dir", str(tmp_path / f"out-{run_id}"), "--quiet"])


def gate_of(tmp_path: Path, run_id: int) -> dict:
    return json.loads((tmp_path / f"out-{run_id}" / "comparison.json").read_text())["gate"]


# --- 1. a commit is authorised only by its full sha ----------------------------------------------------------------


def colliding_commits(root: Path, reviewed_tree: str, other_tree: str, parent: str, digits: int = 7) -> tuple[str, str]:
    """Two commits whose shas share their first `digits` hex digits, one of each tree, written into the repository:
    the birthday search the pull request's author can run, about 2^(2·digits) tries (2^14 here, milliseconds)."""

    def body(tree: str, i: int) -> bytes:
        who = "t <t@example.com> 1700000000 +0000"
        text = f"tree {tree}\nparent {parent}\nauthor {who}\ncommitter {who}\n\nchange {i}\n".encode()
        return b"commit %d\0" % len(text) + text

    seen: dict[str, int] = {}
    for i in range(1 << 22):
        for tree, table in ((reviewed_tree, seen), (other_tree, None)):
            prefix = hashlib.sha1(body(tree, i)).hexdigest()[:digits]
            if table is not None:
                table.setdefault(prefix, i)
            elif prefix in seen:
                made = []
                for tree_, n in ((reviewed_tree, seen[prefix]), (other_tree, i)):
                    content = body(tree_, n).split(b"\0", 1)[1]
                    done = subprocess.run(
                        ["git", "hash-object", "-t", "commit", "-w", "--stdin"],
                        cwd=root,
                        input=content,
                        capture_output=True,
                        check=True,
                    )
                    made.append(done.stdout.decode().strip())
                return made[0], made[1]
    raise AssertionError("no collision found")


def test_a_maintainer_naming_the_reviewed_commits_short_sha_never_runs_the_colliding_head(tmp_path, monkeypatch, fake):
    """The attack itself: the author pushes a commit sharing the 7-digit prefix of the one the maintainer reviewed;
    `/eval <reviewed[:7]>` must not run it (it used to: the head started with the prefix)."""
    config, base = repository(tmp_path, "good")
    root = config.parent
    reviewed_tree = git(root, "rev-parse", "HEAD^{tree}")
    config.write_text(config.read_text().replace("SETUP_RAN", "MALICIOUS_RAN"))
    git(root, "add", "-A")
    other_tree = git(root, "write-tree")
    reviewed, malicious = colliding_commits(root, reviewed_tree, other_tree, base)
    assert reviewed[:7] == malicious[:7] and reviewed != malicious
    git(root, "reset", "-q", "--hard", malicious)
    fake.add_pull(7, malicious)
    fake.state.permissions["maint"] = "write"
    asked = fake.comment_as(7, f"/eval {reviewed[:7]}", "maint", created_at=AT)
    assert run_comment(monkeypatch, fake, tmp_path, config, asked) == 1
    assert not (root / "MALICIOUS_RAN").exists() and fake.state.statuses == []
    (reply,) = replies(fake)
    assert f"`/eval {malicious}`" in reply  # the head's full sha, to review before copying


@pytest.mark.parametrize("digits", [7, 12, 39])
@pytest.mark.parametrize("accept", [False, True], ids=["eval", "accept"])
def test_a_short_sha_authorises_nothing_not_even_the_heads_own(tmp_path, monkeypatch, fake, capsys, digits, accept):
    """The author makes both commits, so any prefix can be shared by a commit nobody reviewed: a prefix of the very
    head is refused too, and the refusal gives the full sha to copy."""
    config, head = repository(tmp_path, "broken")
    fake.add_pull(7, head)
    fake.state.permissions["maint"] = "write"
    text = f"/eval accept {head[:digits]} the judge changed" if accept else f"/eval {head[:digits]}"
    asked = fake.comment_as(7, text, "maint", created_at=AT)
    assert run_comment(monkeypatch, fake, tmp_path, config, asked) == 1
    assert not (config.parent / "SETUP_RAN").exists() and not (tmp_path / "out").exists()
    assert fake.state.reactions == [] and fake.state.statuses == [] and ours(fake) == []
    (reply,) = replies(fake)
    again = f"`/eval accept {head} <reason>`" if accept else f"`/eval {head}`"
    assert "is a short sha" in reply and again in reply and len(reply.strip().splitlines()) == 1
    assert again in capsys.readouterr().err  # the job log says the same


def test_the_full_sha_runs_and_a_full_sha_of_another_commit_names_the_head(tmp_path, monkeypatch, fake):
    config, head = repository(tmp_path, "good")
    fake.add_pull(7, head)
    fake.state.permissions["maint"] = "write"
    other = fake.comment_as(7, f"/eval {'e' * 40}", "maint", created_at=AT)
    assert run_comment(monkeypatch, fake, tmp_path, config, other) == 1
    assert f"the pull request's head is now `{head}`" in replies(fake)[0] and f"`/eval {head}`" in replies(fake)[0]
    asked = fake.comment_as(7, f"/eval {head.upper()}", "maint", created_at=AT)
    assert run_comment(monkeypatch, fake, tmp_path, config, asked, run_id=301) == 0
    assert (config.parent / "SETUP_RAN").exists()
    assert [(s["_sha"], s["state"]) for s in fake.state.statuses] == [(head, "success")]


# --- 2. nothing the pull request can change decides trust --------------------------------------------------------


def test_a_forged_acceptance_under_the_pull_requests_own_comment_author_counts_for_nothing(tmp_path, monkeypatch, fake):
    """The pull request's config names its author as ours; the author (no write access) posts our marker with an
    acceptance "by maint"; a maintainer's `/eval <sha>` must still fail the regressed commit."""
    config, _ = repository(tmp_path, "broken")
    head = with_config(config, "comment: {author: mallory}\n")
    fake.add_pull(7, head)
    fake.state.permissions.update({"maint": "write", "mallory": "read"})
    forged = StickyData(acceptances=[Acceptance(head, "maint", "looks fine", BEFORE)])
    fake.comment_as(7, f"{marker('eval-gate.yml')}\n{data_line(forged)}\nok", "mallory", created_at=BEFORE)
    asked = fake.comment_as(7, f"/eval {head}", "maint", created_at=AT)
    assert run_comment(monkeypatch, fake, tmp_path, config, asked) == 1
    gate = json.loads((tmp_path / "out" / "comparison.json").read_text())["gate"]
    assert gate["verdict"] == "fail" and not gate["overridden"] and gate["override"] is None
    assert [(s["_sha"], s["state"]) for s in fake.state.statuses] == [(head, "failure")]
    mallorys, ours_now = ours(fake)
    assert mallorys["user"]["login"] == "mallory" and len(fake.history(mallorys["id"])) == 1  # never edited
    assert ours_now["user"]["login"] == "github-actions[bot]" and "adk-eval-gate failed" in ours_now["body"]
    assert "overridden by" not in ours_now["body"] and "accepted by" not in ours_now["body"]


def test_our_login_comes_from_the_base_branchs_config_not_the_pull_requests(tmp_path, monkeypatch, fake):
    """Another App's token (GitHub will not name it): the base branch's `comment.author` finds our comment again;
    the pull request's own `comment.author` is never asked."""
    config, _ = repository(tmp_path, "good")
    on_base(fake, 'comment: {author: "eval-bot[bot]"}\n' + config.read_text())
    head = with_config(config, "comment: {author: mallory}\n")
    assert run_pr(monkeypatch, fake, tmp_path, config, head, 401, token="ghs_otherApp") == 0
    assert run_pr(monkeypatch, fake, tmp_path, config, head, 402, token="ghs_otherApp") == 0
    (comment,) = ours(fake)  # found again and updated: not a second comment
    assert comment["user"]["login"] == "eval-bot[bot]" and "runs/402" in comment["body"]
    reads = fake.calls("GET", r"/contents/eval-gate\.yml$")
    assert reads and all(r["query"] == {"ref": BASE} for r in reads)


def test_the_pull_request_cannot_borrow_another_comments_acceptances_by_naming_its_key(tmp_path, monkeypatch, fake):
    """Our comment for another config (key `other`) holds a real acceptance of this very commit; the pull request
    names that key in its own config: the acceptance stays the other config's, and its comment is left alone."""
    config, _ = repository(tmp_path, "broken")
    head = with_config(config, "comment: {key: other}\n")
    elsewhere = StickyData(acceptances=[Acceptance(head, "maint", "for the other suite", BEFORE)])
    other = fake.make_comment(7, f"{marker('other')}\n{data_line(elsewhere)}\nreport", fake.url)
    assert run_pr(monkeypatch, fake, tmp_path, config, head, 451) == 1
    assert not gate_of(tmp_path, 451)["overridden"]
    assert len(fake.history(other["id"])) == 1
    assert ours(fake)[-1]["body"].startswith(marker("eval-gate.yml"))


def test_the_status_eval_sets_has_the_base_branchs_name_not_another_required_checks(tmp_path, monkeypatch, fake):
    """The pull request names another required check (`build`) as ours: `/eval` must not set that status."""
    config, _ = repository(tmp_path, "good")
    original = config.read_text()
    head = with_config(config, "report: {check_name: build}\n")
    fake.add_pull(7, head)
    fake.state.permissions["maint"] = "write"
    asked = fake.comment_as(7, f"/eval {head}", "maint", created_at=AT)
    assert run_comment(monkeypatch, fake, tmp_path, config, asked) == 0
    assert [(s["_sha"], s["context"]) for s in fake.state.statuses] == [(head, "adk-eval-gate")]
    on_base(fake, "report: {check_name: agent-evals}\n" + original)
    again = fake.comment_as(7, f"/eval {head}", "maint", created_at=AT)
    assert run_comment(monkeypatch, fake, tmp_path, config, again, run_id=302) == 0
    assert [s["context"] for s in fake.state.statuses] == ["adk-eval-gate", "agent-evals"]


def test_a_stopped_eval_run_marks_our_comment_under_the_base_branchs_key(tmp_path, monkeypatch, fake):
    """The status step of an `/eval` run has an issue, not a pull request: the base commit, and so the key, come
    from the API."""
    config, first = repository(tmp_path, "good")
    on_base(fake, "comment: {key: evals}\n" + config.read_text())
    fake.add_pull(7, first)
    assert run_pr(monkeypatch, fake, tmp_path, config, first, 901) == 0
    config.write_text(config.read_text().replace("setup: [", "setup: [\"python -c 'raise SystemExit(3)'\", "))
    git(config.parent, "commit", "-qam", "a setup command that fails")
    head = git(config.parent, "rev-parse", "HEAD")
    fake.push(7, head)
    fake.state.permissions["maint"] = "write"
    asked = fake.comment_as(7, f"/eval {head}", "maint", created_at=AT)
    assert run_comment(monkeypatch, fake, tmp_path, config, asked, run_id=902) == 2
    (comment,) = ours(fake)
    assert comment["body"].startswith(marker("evals")) and read_data(comment["body"]).state == "running"
    assert main(["status", "--state", "failed", "--config", str(config)]) == 0
    assert read_data(ours(fake)[0]["body"]).state == "failed"


def test_the_override_label_is_the_base_branchs_not_the_one_the_pull_request_names(tmp_path, monkeypatch, fake):
    """The pull request names a label automation adds (or one already on it) as its override: it fails; the same
    label named by the base branch overrides."""
    config, _ = repository(tmp_path, "broken")
    original = config.read_text()
    head = with_config(config, "gate: {override_label: documentation}\n")
    fake.add_label(7, "documentation", "labeler[bot]", BEFORE)
    assert run_pr(monkeypatch, fake, tmp_path, config, head, 501, labels=["documentation"]) == 1
    assert not gate_of(tmp_path, 501)["overridden"]
    on_base(fake, "gate: {override_label: documentation}\n" + original)
    assert run_pr(monkeypatch, fake, tmp_path, config, head, 502, labels=["documentation"]) == 0
    assert gate_of(tmp_path, 502)["override"]["label"] == "documentation"


def test_a_base_config_that_cannot_be_read_lets_no_label_override(tmp_path, monkeypatch, fake, capsys):
    config, head = repository(tmp_path, "broken")
    on_base(fake, "gate: [this is: not, a config\n")
    fake.add_label(7, OVERRIDE, "lead", BEFORE)
    assert run_pr(monkeypatch, fake, tmp_path, config, head, 601, labels=[OVERRIDE]) == 1
    assert not gate_of(tmp_path, 601)["overridden"]
    err = capsys.readouterr().err
    assert f"the base branch's eval-gate.yml (at {BASE[:12]}) is not a config this version can read" in err
    assert "no label overrides the gate" in err


# --- 3. a list read in part is no proof ----------------------------------------------------------------------------


def test_a_force_push_past_the_timelines_bound_is_not_missed(tmp_path, monkeypatch, fake):
    """The head was force-pushed before the comment, then thousands of events, then force-pushed after it: a
    timeline read up to its bound would show only the first force-push and run the bare `/eval`."""
    config, head = repository(tmp_path, "good")
    fake.add_pull(7, "d" * 40)
    fake.push(7, head, force_at=BEFORE)
    for i in range(3000):
        fake.add_label(7, f"noise-{i}", "mallory", BEFORE)
    fake.push(7, head, force_at=AFTER)
    fake.state.permissions["maint"] = "write"
    asked = fake.comment_as(7, "/eval", "maint", created_at=AT)
    assert run_comment(monkeypatch, fake, tmp_path, config, asked) == 1
    assert not (config.parent / "SETUP_RAN").exists() and fake.state.statuses == []
    (reply,) = replies(fake)
    assert "the pull request's timeline has more than 3000 entries; it is not read in part" in reply
    assert f"`/eval {head}`" in reply


def test_our_comment_past_the_comments_bound_is_an_error_not_absent(fake):
    """Which comment is ours (and whose acceptances count) is read from every comment or not at all."""
    fake.add_pull(7, "c" * 40)
    for i in range(MAX_COMMENTS):
        fake.comment_as(7, f"noise {i}", "mallory", created_at=BEFORE)
    accepted = StickyData(acceptances=[Acceptance("c" * 40, "maint", "ok", AT)])
    fake.make_comment(7, f"{marker('k')}\n{data_line(accepted)}\nreport", fake.url)
    client = GitHubClient(fake.url, "ghs_workflowToken1")
    with pytest.raises(GitHubError, match=f"the pull request's comments has more than {MAX_COMMENTS} entries"):
        find_ours(client, "o/r", 7, "k", Author("github-actions[bot]", assumed=True))
    fake.state.comments[7] = fake.state.comments[7][1:]  # one fewer: the whole list, and ours in it
    (found,) = find_ours(client, "o/r", 7, "k", Author("github-actions[bot]", assumed=True))
    assert found["body"].startswith(marker("k"))


def test_a_page_that_is_not_a_list_is_no_answer(fake):
    fake.add_label(7, OVERRIDE, "lead", BEFORE)
    fake.fault("GET", "/issues/7/labels$", 200, body={"name": OVERRIDE})  # an object where GitHub sends a list
    client = GitHubClient(fake.url, "ghs_workflowToken1")
    path = "/repos/o/r/issues/7/labels"
    with pytest.raises(GitHubError, match="the pull request's labels: a page that is not a list"):
        client.paginate_whole(path, limit=100, what="the pull request's labels")
    assert [label["name"] for label in client.paginate_whole(path, limit=100, what="labels")] == [OVERRIDE]


# --- 4. a label the API cannot confirm never overrides -------------------------------------------------------------


def test_labels_the_api_does_not_confirm_override_nothing_and_the_report_says_so(tmp_path, monkeypatch, fake, capsys):
    """A re-run's payload still lists the override label: removed since (the API lists none), or on the pull
    request but the API refuses to list the labels. Neither passes a regression."""
    config, head = repository(tmp_path, "broken")
    assert run_pr(monkeypatch, fake, tmp_path, config, head, 701, labels=[OVERRIDE]) == 1
    assert not gate_of(tmp_path, 701)["overridden"]
    fake.add_label(7, OVERRIDE, "lead", BEFORE)
    fake.fault("GET", "/issues/7/labels$", 403, body={"message": "Resource not accessible by integration"})
    assert run_pr(monkeypatch, fake, tmp_path, config, head, 801, labels=[OVERRIDE]) == 1
    assert not gate_of(tmp_path, 801)["overridden"]
    assert "no label overrides the gate on this run" in ours(fake)[0]["body"]
    assert "the pull request's labels could not be read" in capsys.readouterr().err


def test_compare_counts_only_labels_the_api_confirms(tmp_path, monkeypatch, fake):
    config, head = repository(tmp_path, "broken")
    results = tmp_path / "results.json"
    assert main(["run", "--config", str(config), "--output", str(results), "--quiet"]) == 1
    event = pull_request_event(tmp_path / "pr.json", 7, head=head)
    payload = json.loads(event.read_text())
    payload["pull_request"]["labels"] = [{"name": OVERRIDE}]  # stale: the API lists no label now
    event.write_text(json.dumps(payload))
    actions_env(monkeypatch, fake, tmp_path, "pull_request", event, GITHUB_WORKSPACE=str(config.parent))
    argv = ["compare", "--results", str(results), "--baseline", str(config.parent / "base.json")]
    argv += ["--output", str(tmp_path / "comparison.json")]
    assert main([*argv, "--config", str(config)]) == 1
    assert fake.calls("GET", "/issues/7/labels$")
    fake.add_label(7, OVERRIDE, "lead", BEFORE)
    assert main([*argv, "--config", str(config)]) == 0


# --- 5. only a created comment is a command ------------------------------------------------------------------------


@pytest.mark.parametrize("action", ["edited", "deleted", None])
def test_an_edited_or_deleted_command_never_runs_or_accepts(tmp_path, monkeypatch, fake, capsys, action):
    config, head = repository(tmp_path, "broken")
    fake.add_pull(7, head)
    fake.state.permissions["maint"] = "write"
    asked = fake.comment_as(7, f"/eval accept {head} flaky judge", "maint", created_at=AT)
    event = comment_event(tmp_path, asked)
    payload = json.loads(event.read_text())
    payload.pop("action") if action is None else payload.update(action=action)
    event.write_text(json.dumps(payload))
    actions_env(monkeypatch, fake, tmp_path, "issue_comment", event, GITHUB_WORKSPACE=str(config.parent))
    capsys.readouterr()
    assert main(["ci", "--config", str(config), "--output-dir", str(tmp_path / "out"), "--quiet"]) == 0
    assert fake.state.requests == [] and not (config.parent / "SETUP_RAN").exists()
    out = capsys.readouterr().out
    assert f"the comment event is “{action or 'no action'}”, not “created”: only a new comment is a command" in out
