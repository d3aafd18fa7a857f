"""The pull request as a conversation (issue 21), end to end through the CLI against the fake GitHub API: `/eval`
from a maintainer, a read-only collaborator, an outsider and a bot; a head that moves after the comment; the live
status while a run is under way, and what a cancelled or crashed run leaves; `/eval accept` bound to one commit.

The repository is a real git checkout (the gate checks the commit it is about to run), the agent a command-protocol
agent run by the real pipeline; the setup command leaves a file behind, so "no code ran" is something to check.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from adk_eval_gate.commands.main import main
from adk_eval_gate.github.commands import CommandError, EvalCommand, is_command, parse_command
from adk_eval_gate.github.conversation import head_before
from adk_eval_gate.handshake.ours import marker
from adk_eval_gate.handshake.sticky import Acceptance, StickyData, data_line, read_data
from tests.e2e.test_trust import actions_env, make_repo, pull_request_event
from tests.support.fake_github import FakeGitHub

BEFORE, AT, AFTER = "2026-11-22T09:00:00Z", "2026-11-22T10:00:00Z", "2026-11-22T11:00:00Z"
SETUP = "setup: [\"python -c \\\"open('SETUP_RAN', 'w').close()\\\"\"]\n"


@pytest.fixture
def fake():
    with FakeGitHub() as server:
        yield server
        assert server.state.schema_errors == [], server.state.schema_errors


def git(root: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
        cwd=root,
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout.strip()


def repository(tmp_path: Path, mode: str) -> tuple[Path, str]:
    """A checkout whose agent is `mode` (good, broken), with a baseline from the good agent; its head's sha."""
    root = tmp_path / "repo"
    extra = "baseline: {store: file, path: base.json}\n" + SETUP
    config = make_repo(root, "good", extra=extra)
    assert main(["run", "--config", str(config), "--output", str(root / "base.json"), "--quiet"]) == 0
    make_repo(root, mode, extra=extra)
    (root / "SETUP_RAN").unlink(missing_ok=True)
    if not (root / ".git").exists():
        git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-q", "--allow-empty", "-m", f"agent {mode}")
    return config, git(root, "rev-parse", "HEAD")


def comment_event(tmp_path: Path, comment: dict, number: int = 7) -> Path:
    path = tmp_path / f"comment-{comment['id']}.json"
    issue = {"number": number, "pull_request": {"url": f"https://api.github.com/repos/o/r/pulls/{number}"}}
    path.write_text(
        json.dumps(
            {
                "action": "created",
                "issue": issue,
                "comment": comment,
                "repository": {"full_name": "o/r", "default_branch": "main"},
            }
        )
    )
    return path


def run_comment(monkeypatch, fake, tmp_path, config, comment, run_id=300, out="out") -> int:
    actions_env(
        monkeypatch,
        fake,
        tmp_path,
        "issue_comment",
        comment_event(tmp_path, comment),
        GITHUB_RUN_ID=str(run_id),
        GITHUB_SHA="a" * 40,  # an issue_comment run's commit is the default branch's
        GITHUB_REF="refs/heads/main",
        GITHUB_WORKSPACE=str(config.parent),
    )
    return main(["ci", "--config", str(config), "--output-dir", str(tmp_path / out), "--quiet"])


def run_pull_request(monkeypatch, fake, tmp_path, config, head, run_id, out="pr") -> int:
    event = pull_request_event(tmp_path / f"pr-{run_id}.json", 7, head=head)
    actions_env(monkeypatch, fake, tmp_path, "pull_request", event, GITHUB_RUN_ID=str(run_id), GITHUB_BASE_REF="main")
    monkeypatch.setenv("GITHUB_WORKSPACE", str(config.parent))
    return main(["ci", "--config", str(config), "--output-dir", str(tmp_path / out), "--quiet"])


def ours(fake: FakeGitHub, number: int = 7) -> list[dict]:
    return [c for c in fake.state.comments.get(number, []) if c["body"].startswith("<!-- adk-eval-gate: ")]


def replies(fake: FakeGitHub, number: int = 7) -> list[str]:
    return [
        c["body"]
        for c in fake.state.comments.get(number, [])
        if c["user"]["login"] == "github-actions[bot]"
        and not c["body"].startswith(("<!-- adk-eval-gate: ", "/eval"))  # ours, or a command the bot itself wrote
    ]


# --- /eval: who may, and for which commit ------------------------------------------------------------------------


def test_a_maintainer_evaluates_the_named_head_with_a_reaction_a_comment_and_a_status(tmp_path, monkeypatch, fake):
    config, head = repository(tmp_path, "good")
    fake.add_pull(7, head)
    fake.state.permissions["maint"] = "maintain"
    asked = fake.comment_as(7, f"/eval {head}\nplease run it again", "maint", created_at=AT)
    assert run_comment(monkeypatch, fake, tmp_path, config, asked) == 0
    assert (config.parent / "SETUP_RAN").exists()
    assert [(r["_comment"], r["content"], r["user"]["login"]) for r in fake.state.reactions] == [
        (asked["id"], "eyes", "github-actions[bot]")
    ]
    assert fake.calls("GET", r"/collaborators/maint/permission")
    (sticky,) = ours(fake)
    assert "adk-eval-gate passed" in sticky["body"] and f"commit {head[:12]}" in sticky["body"]
    assert "Run by @\u200bmaint" in sticky["body"] and "@maint" not in sticky["body"]
    statuses = [(s["_sha"], s["state"], s["context"]) for s in fake.state.statuses]
    assert statuses == [(head, "success", "adk-eval-gate")]
    results = json.loads((tmp_path / "out" / "results.json").read_text())
    assert results["git"]["sha"] == head  # not the default branch's GITHUB_SHA
    assert replies(fake) == []


@pytest.mark.parametrize("role", ["read", "triage", "none"])
def test_without_write_access_nobody_runs_anything_and_gets_one_polite_line(tmp_path, monkeypatch, fake, role):
    config, head = repository(tmp_path, "good")
    fake.add_pull(7, head)
    fake.state.permissions["visitor"] = role
    # author_association is not a permission: a COLLABORATOR with read access still may not run code with secrets
    asked = fake.comment_as(7, f"/eval {head}", "visitor", created_at=AT)
    asked["author_association"] = "COLLABORATOR"
    assert run_comment(monkeypatch, fake, tmp_path, config, asked) == 0
    assert not (config.parent / "SETUP_RAN").exists() and not (tmp_path / "out").exists()
    (reply,) = replies(fake)
    assert "Only people with write access" in reply and "\n" not in reply.strip()
    assert fake.state.reactions == [] and fake.state.statuses == [] and ours(fake) == []
    assert fake.calls("GET", r"/pulls/7") == []  # refused before anything about the pull request was read


@pytest.mark.parametrize(
    ("login", "kind"), [("dependabot[bot]", "Bot"), ("github-actions[bot]", "Bot"), ("renovate[bot]", "User")]
)
def test_a_bot_or_our_own_token_is_never_a_commander(tmp_path, monkeypatch, fake, login, kind):
    config, head = repository(tmp_path, "good")
    fake.add_pull(7, head)
    fake.state.permissions[login] = "admin"
    asked = fake.comment_as(7, "/eval", login, kind=kind, created_at=AT)
    assert run_comment(monkeypatch, fake, tmp_path, config, asked) == 0
    assert not (config.parent / "SETUP_RAN").exists()
    assert replies(fake) == [] and fake.state.reactions == []
    assert fake.calls("GET", "/permission") == [] and fake.calls("POST") == []


def test_a_comment_that_is_not_a_command_or_not_on_a_pull_request_does_nothing(tmp_path, monkeypatch, fake):
    config, head = repository(tmp_path, "good")
    fake.add_pull(7, head)
    fake.state.permissions["maint"] = "write"
    chat = fake.comment_as(7, "I think /eval would help here", "maint", created_at=AT)
    assert run_comment(monkeypatch, fake, tmp_path, config, chat) == 0
    issue = comment_event(tmp_path, fake.comment_as(7, "/eval", "maint", created_at=AT))
    payload = json.loads(issue.read_text())
    del payload["issue"]["pull_request"]
    issue.write_text(json.dumps(payload))
    monkeypatch.setenv("GITHUB_EVENT_PATH", str(issue))
    assert main(["ci", "--config", str(config), "--output-dir", str(tmp_path / "x"), "--quiet"]) == 0
    assert fake.state.requests == [] and not (config.parent / "SETUP_RAN").exists()


def test_a_head_that_moved_after_the_named_commit_is_refused(tmp_path, monkeypatch, fake):
    config, head = repository(tmp_path, "good")
    fake.add_pull(7, head)
    fake.state.permissions["maint"] = "write"
    asked = fake.comment_as(7, f"/eval {head}", "maint", created_at=AT)
    # the fork pushes after the maintainer wrote the comment, and the checkout has it too
    (config.parent / "agent.py").write_text((config.parent / "agent.py").read_text() + "\n# slipped in\n")
    git(config.parent, "commit", "-qam", "slipped in")
    moved = git(config.parent, "rev-parse", "HEAD")
    fake.push(7, moved, commit_date="2026-11-01T00:00:00Z")  # backdated: the commit date proves nothing
    assert run_comment(monkeypatch, fake, tmp_path, config, asked) == 1
    assert not (config.parent / "SETUP_RAN").exists() and not (tmp_path / "out").exists()
    (reply,) = replies(fake)
    assert f"head is now `{moved}`, not `{head}`" in reply
    assert fake.state.reactions == [] and fake.state.statuses == []


def test_a_checkout_that_raced_a_push_is_refused(tmp_path, monkeypatch, fake):
    config, head = repository(tmp_path, "good")
    fake.add_pull(7, head)
    fake.state.permissions["maint"] = "write"
    asked = fake.comment_as(7, f"/eval {head}", "maint", created_at=AT)
    git(config.parent, "commit", "-q", "--allow-empty", "-m", "pushed between the comment and the checkout")
    assert run_comment(monkeypatch, fake, tmp_path, config, asked) == 1
    assert not (config.parent / "SETUP_RAN").exists()
    assert "a push raced the checkout" in replies(fake)[0] and f"write `/eval {head}` again" in replies(fake)[0]


@pytest.mark.parametrize(
    ("push", "runs"),
    [
        ({"commit_date": BEFORE}, False),  # an ordinary push: GitHub records no time for it, whatever its date says
        ({"force_at": BEFORE}, True),  # force-pushed before the comment: the server's time proves it
        ({"force_at": AFTER}, False),  # force-pushed after the comment
    ],
    ids=["ordinary-push", "force-push-before", "force-push-after"],
)
def test_a_bare_eval_runs_only_when_github_records_the_head_before_the_comment(tmp_path, monkeypatch, fake, push, runs):
    config, head = repository(tmp_path, "good")
    fake.add_pull(7, "d" * 40)
    fake.push(7, head, **push)
    fake.state.permissions["maint"] = "admin"
    asked = fake.comment_as(7, "/eval", "maint", created_at=AT)
    assert run_comment(monkeypatch, fake, tmp_path, config, asked) == (0 if runs else 1)
    assert (config.parent / "SETUP_RAN").exists() == runs
    assert bool(fake.state.statuses) == runs
    if not runs:
        assert f"name the commit you reviewed by its full sha, e.g. `/eval {head}`" in replies(fake)[0]


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ("/eval please <img src=x onerror=alert(1)> @everyone", "unknown argument “please”"),
        ("/eval runs=1000", "runs must be a whole number from 2 to 100"),
        ("/eval accept", "needs a reason"),
        ("/eval cases=<script>", "cases= takes SET"),
        ("/eval help me", "takes no argument"),
    ],
)
def test_a_bad_command_gets_one_escaped_line_and_never_runs(tmp_path, monkeypatch, fake, body, expected):
    config, head = repository(tmp_path, "good")
    fake.add_pull(7, head)
    fake.state.permissions["maint"] = "write"
    asked = fake.comment_as(7, body, "maint", created_at=AT)
    assert run_comment(monkeypatch, fake, tmp_path, config, asked) == 0
    (reply,) = replies(fake)
    assert expected in reply and len(reply.strip().splitlines()) == 1
    assert "<img" not in reply and "<script" not in reply and "@everyone" not in reply
    assert not (config.parent / "SETUP_RAN").exists()


def test_a_hostile_argument_is_quoted_escaped(tmp_path, monkeypatch, fake):
    config, head = repository(tmp_path, "good")
    fake.add_pull(7, head)
    fake.state.permissions["maint"] = "write"
    asked = fake.comment_as(7, "/eval @everyone <b>x</b>", "maint", created_at=AT)
    assert run_comment(monkeypatch, fake, tmp_path, config, asked) == 0
    (reply,) = replies(fake)
    assert "“@\u200beveryone”" in reply and "@everyone" not in reply


def test_runs_and_cases_from_a_comment(tmp_path, monkeypatch, fake):
    config, head = repository(tmp_path, "good")
    fake.add_pull(7, head)
    fake.state.permissions["maint"] = "write"
    asked = fake.comment_as(7, f"/eval {head} runs=3 cases=qa:q1,q2", "maint", created_at=AT)
    assert run_comment(monkeypatch, fake, tmp_path, config, asked) == 0
    results = json.loads((tmp_path / "out" / "results.json").read_text())
    (eval_set,) = results["eval_sets"]
    assert sorted(c["eval_id"] for c in eval_set["cases"]) == ["q1", "q2"]
    assert eval_set["adaptive_runs"] == {"min": 1, "max": 3}
    # a subset is no verdict on the commit: reported, no status
    assert fake.state.statuses == []
    assert "A partial run (cases=)" in ours(fake)[0]["body"]


# --- the live status -------------------------------------------------------------------------------------------------


def test_the_comment_says_which_commit_is_being_evaluated_and_keeps_the_previous_result(tmp_path, monkeypatch, fake):
    config, first = repository(tmp_path, "good")
    assert run_pull_request(monkeypatch, fake, tmp_path, config, first, 401) == 0
    (comment,) = ours(fake)
    assert len(fake.history(comment["id"])) == 1  # no comment yet: the first result is the first thing posted
    _, second = repository(tmp_path, "good")
    assert run_pull_request(monkeypatch, fake, tmp_path, config, second, 402) == 0
    created, status, result = fake.history(comment["id"])
    visible = status.split("\n", 4)[4]
    assert visible.startswith(f"## ⏳ adk-eval-gate is evaluating commit `{second[:12]}`")
    assert "[workflow run](https://github.com/o/r/actions/runs/402)" in status
    assert f"<details><summary>Previous result, for commit {first[:12]} (not this commit)</summary>" in status
    assert created.split("\n", 4)[4].strip() in status  # the previous result, whole, collapsed
    assert read_data(status).state == "running" and read_data(status).evaluating == second
    assert "⏳" not in result and f"commit {second[:12]}" in result and read_data(result).result_sha == second


def test_the_status_costs_one_request_and_progress_false_turns_it_off(tmp_path, monkeypatch, fake):
    config, head = repository(tmp_path, "good")
    assert run_pull_request(monkeypatch, fake, tmp_path, config, head, 501) == 0
    counts, original = [], config.read_text()
    for run_id, progress in ((502, "true"), (503, "false")):
        config.write_text(f"comment: {{progress: {progress}}}\n" + original)
        before = len(fake.state.requests)
        assert run_pull_request(monkeypatch, fake, tmp_path, config, head, run_id) == 0
        counts.append(len(fake.state.requests) - before)
    assert counts[0] == counts[1] + 1
    (comment,) = ours(fake)
    assert sum("⏳" in body for body in fake.history(comment["id"])) == 1


def test_a_crashed_run_and_a_cancelled_run_leave_the_status_saying_so(tmp_path, monkeypatch, fake):
    config, first = repository(tmp_path, "good")
    assert run_pull_request(monkeypatch, fake, tmp_path, config, first, 601) == 0
    _, second = repository(tmp_path, "good")
    config.write_text(config.read_text().replace("setup: [", "setup: [\"python -c 'raise SystemExit(3)'\", "))
    assert run_pull_request(monkeypatch, fake, tmp_path, config, second, 602) == 2  # the setup command failed
    (comment,) = ours(fake)
    assert read_data(comment["body"]).state == "running"
    assert main(["status", "--state", "failed", "--config", str(config)]) == 0
    failed = ours(fake)[0]["body"]
    assert f"the evaluation of commit `{second[:12]}` failed" in failed and read_data(failed).state == "failed"
    assert f"Previous result, for commit {first[:12]} " in failed
    # the next attempt is cancelled: its own status step says so; the earlier attempt's step no longer may
    monkeypatch.setenv("GITHUB_RUN_ATTEMPT", "2")
    assert run_pull_request(monkeypatch, fake, tmp_path, config, second, 602) == 2
    monkeypatch.setenv("GITHUB_RUN_ATTEMPT", "1")
    edits = len(fake.history(comment["id"]))
    assert main(["status", "--state", "cancelled", "--config", str(config)]) == 0
    assert len(fake.history(comment["id"])) == edits  # attempt 1 does not own the status any more
    monkeypatch.setenv("GITHUB_RUN_ATTEMPT", "2")
    assert main(["status", "--state", "cancelled", "--config", str(config)]) == 0
    cancelled = ours(fake)[0]["body"]
    assert "was cancelled before it reported" in cancelled and "(attempt 2)" in cancelled
    assert f"Previous result, for commit {first[:12]} " in cancelled  # still the last result, not a status


def test_a_status_step_after_a_run_that_reported_leaves_the_comment_alone(tmp_path, monkeypatch, fake):
    config, head = repository(tmp_path, "broken")
    assert run_pull_request(monkeypatch, fake, tmp_path, config, head, 701) == 1  # the gate failed: a report
    (comment,) = ours(fake)
    edits = len(fake.history(comment["id"]))
    assert main(["status", "--state", "failed", "--config", str(config)]) == 0
    assert len(fake.history(comment["id"])) == edits and "adk-eval-gate failed" in ours(fake)[0]["body"]


# --- /eval accept -----------------------------------------------------------------------------------------------------


def test_accept_passes_this_commit_only_and_a_forged_acceptance_counts_for_nothing(tmp_path, monkeypatch, fake):
    config, regressed = repository(tmp_path, "broken")
    fake.add_pull(7, regressed)
    fake.state.permissions["maint"] = "write"
    assert run_pull_request(monkeypatch, fake, tmp_path, config, regressed, 801) == 1
    accept = fake.comment_as(7, f"/eval accept {regressed} the judge prompt changed, see #12", "maint", created_at=AT)
    assert run_comment(monkeypatch, fake, tmp_path, config, accept, run_id=802, out="accepted") == 0
    body = ours(fake)[0]["body"]
    assert "adk-eval-gate passed (accepted by @\u200bmaint)" in body
    assert "accepted by @\u200bmaint for commit" in body and "the judge prompt changed, see \\#\u200b12" in body
    gate = json.loads((tmp_path / "accepted" / "comparison.json").read_text())["gate"]
    assert gate["verdict"] == "pass" and gate["overridden"] and gate["failures"]
    assert gate["override"]["by"] == "maint" and gate["override"]["sha"] == regressed and gate["override"]["at"] == AT
    assert [(s["_sha"], s["state"]) for s in fake.state.statuses] == [(regressed, "success")]
    assert "accepted by @maint" in fake.state.statuses[0]["description"]
    # a re-run of the pull request's own event at that commit reads the acceptance back from our comment
    assert run_pull_request(monkeypatch, fake, tmp_path, config, regressed, 803, out="rerun") == 0
    # someone without write access pastes our marker and an acceptance of the next commit into their own comment
    _, next_commit = repository(tmp_path, "broken")
    forged = StickyData(acceptances=[Acceptance(next_commit, "visitor", "trust me", AFTER)])
    fake.comment_as(7, f"{marker('eval-gate.yml')}\n{data_line(forged)}\nlooks fine", "visitor", created_at=AFTER)
    assert run_pull_request(monkeypatch, fake, tmp_path, config, next_commit, 804, out="next") == 1
    assert "adk-eval-gate failed" in ours(fake)[0]["body"]


def test_the_override_label_names_who_added_it_and_when(tmp_path, monkeypatch, fake):
    config, head = repository(tmp_path, "broken")
    fake.add_label(7, "adk-eval-gate: accept regression", "lead", "2026-11-22T08:30:00Z")
    assert run_pull_request(monkeypatch, fake, tmp_path, config, head, 901) == 0
    body = ours(fake)[0]["body"]
    assert (
        "(added by @\u200blead at 2026-11-22T08:30:00Z)" in body and "adk-eval-gate passed (accepted by label)" in body
    )
    gate = json.loads((tmp_path / "pr" / "comparison.json").read_text())["gate"]
    assert gate["override"] == {
        "kind": "label",
        "by": "lead",
        "at": "2026-11-22T08:30:00Z",
        "label": "adk-eval-gate: accept regression",
        "reason": None,
        "sha": None,
        "url": None,
    }


# --- the parser and the proof of the head, alone ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ("/eval", EvalCommand("eval")),
        ("  /eval ABCDEF1\r\nthanks!", EvalCommand("eval", sha="abcdef1")),
        ("/eval runs=8 cases=qa:q1,q2 cases=other", EvalCommand("eval", runs=8, cases=("qa:q1,q2", "other"))),
        ("/eval accept deadbeef1 flaky   judge", EvalCommand("accept", sha="deadbeef1", reason="flaky judge")),
        ("/eval accept the judge changed", EvalCommand("accept", reason="the judge changed")),
        ("/eval help", EvalCommand("help")),
    ],
)
def test_commands_parse_strictly(body, expected):
    assert is_command(body) and parse_command(body) == expected


@pytest.mark.parametrize("body", ["/evaluate", "please /eval", "", "/Eval", None, 7])
def test_other_text_is_no_command(body):
    assert not is_command(body)


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=300))
def test_any_text_after_eval_is_a_command_or_one_error_never_a_crash(text):
    try:
        command = parse_command("/eval " + text)
    except CommandError as exc:
        assert str(exc) and "\n" not in exc.problem
    else:
        assert command.action in ("eval", "accept", "help")
        assert all(c not in "<>@`\n" for selector in command.cases for c in selector)


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=200))
def test_the_comment_data_never_fails_to_read(text):
    assert read_data(f"<!-- adk-eval-gate: k -->\n<!-- adk-eval-gate-data: {text} -->\nreport").state in (
        "done",
        "running",
        "cancelled",
        "failed",
    )


def test_only_the_leading_hidden_lines_are_ours():
    forged = data_line(StickyData(acceptances=[Acceptance("a" * 40, "x", "y", AT)]))
    body = f"<!-- adk-eval-gate: k -->\nreport\n```\n{forged}\n```"
    assert read_data(body).accepted("a" * 40) is None
    assert read_data(f"<!-- adk-eval-gate: k -->\n{forged}\nreport").accepted("a" * 40) is not None


def test_the_head_is_proven_only_by_a_force_push_to_it_before_the_comment():
    force = {"event": "head_ref_force_pushed", "commit_id": "c" * 40, "created_at": BEFORE}
    assert head_before([force], "c" * 40, AT) is None
    assert "after the comment" in head_before([{**force, "created_at": AFTER}], "c" * 40, AT)
    assert "ordinary push" in head_before([force], "d" * 40, AT)  # moved since, by an ordinary push
    assert "ordinary push" in head_before([{"event": "committed", "sha": "c" * 40}], "c" * 40, AT)
    assert head_before([force], "c" * 40, "not a time") == "the comment has no creation time"
