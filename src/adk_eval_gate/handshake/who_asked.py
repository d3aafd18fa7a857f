"""`ci` on an `issue_comment` event: `/eval` from someone with write access runs the pull request's head.

Everything here happens before any of the pull request's code is imported or run (setup commands, custom metrics,
agents): the comment must be newly created (an edit or a deletion is never a command: an edit may be another
writer's words under the author's name, a deletion would accept again), a command, not a bot's, from someone whose
repository permission (asked of the API) is write, maintain or admin, about an open pull request, naming by its
full sha a commit that is the head now (or, without a commit, with the head proven by GitHub's own records to
predate the comment), and the checkout must be that very commit. Anyone else gets one escaped line in reply, or
nothing at all for bots; nothing is run.

Why the full sha: the pull request's author makes both the commit a maintainer reviews and the one that would run,
so they need not match a given prefix (2^(4k) tries for k hex digits, 2^28 for the 7 GitHub shows: minutes on one
core), only find two commits sharing one: a birthday search, about 2^(2k) tries (2^14 for 7 digits: instant).
Only the full sha leaves them a full SHA-1 collision, which Git's own collision detection refuses.
"""

from __future__ import annotations

import dataclasses
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from adk_eval_gate.core.clip import first_line as clip_first_line
from adk_eval_gate.core.clip import short_sha
from adk_eval_gate.core.errors import InputError
from adk_eval_gate.core.escape import inline
from adk_eval_gate.github import workflow_commands as log
from adk_eval_gate.github.client import GitHubClient, GitHubError
from adk_eval_gate.github.commands import USAGE, CommandError, EvalCommand, is_command, parse_command
from adk_eval_gate.github.context import ActionsContext
from adk_eval_gate.github.conversation import WRITERS, head_before, permission, react, reply, timeline
from adk_eval_gate.handshake.ours import token_author
from adk_eval_gate.handshake.sticky import Acceptance


@dataclass
class CommentRun:
    context: ActionsContext  # the pull request's, as the API has it, with the allowed commit as its head
    command: EvalCommand
    acceptance: Acceptance | None
    note: str
    asked_by: str = ""  # the commenter's login
    comment_url: str = ""


@dataclass
class _Asked:
    client: GitHubClient
    repository: str
    number: int
    comment: dict[str, Any]

    def answer(self, text: str) -> None:
        reply(self.client, self.repository, self.number, text)


def prepare_comment_run(context: ActionsContext, checkout: Path, author_input: str | None) -> CommentRun | int:
    """The run a comment asks for, or the exit code when nothing is to run (the reasons are in the log).
    `author_input`: `--comment-author`, the login the token posts as when GitHub cannot say (never the config's:
    the checkout is the pull request's)."""
    issue, comment = context.event["issue"], context.event["comment"]
    action = context.event.get("action")
    if action != "created":  # whatever the workflow's `types:` lets through
        shown = inline(str(action), 40) if isinstance(action, str) else "no action"
        print(
            f"adk-eval-gate: the comment event is “{shown}”, not “created”: only a new comment is a command "
            "(an edit may be someone else's words under its author's name; a deletion asks for nothing): nothing to do"
        )
        return 0
    if not issue.get("pull_request"):
        print("adk-eval-gate: a comment on an issue, not on a pull request: nothing to do")
        return 0
    if not is_command(comment["body"]):
        print("adk-eval-gate: the comment is not an /eval command: nothing to do")
        return 0
    if not (context.token and context.repository):
        raise InputError(None, "GITHUB_TOKEN", "is not set", "pass the workflow's token to answer /eval")
    login = comment["user"]["login"]
    asked = _Asked(context.client(), context.repository, issue["number"], comment)
    ours = token_author(asked.client, author_input).login
    if comment["user"]["type"] == "Bot" or login.endswith("[bot]") or login == ours:
        print(f"adk-eval-gate: a comment by {login} (a bot, or this token) is never a command: nothing to do")
        return 0
    role = permission(asked.client, asked.repository, login)
    if role not in WRITERS:
        asked.answer(
            "Only people with write access to this repository can run `/eval` (it runs this pull request's code "
            "with the repository's secrets); nothing was run. A maintainer can run it for you."
        )
        print(f"adk-eval-gate: {login} has {role} permission, not write: nothing was run")
        return 0
    return _allowed(context, asked, checkout, login)


def _allowed(context: ActionsContext, asked: _Asked, checkout: Path, login: str) -> CommentRun | int:
    try:
        command = parse_command(asked.comment["body"])
    except CommandError as exc:
        quoted = f" “{inline(exc.quoted, 80)}”" if exc.quoted else ""
        asked.answer(f"`/eval`: {inline(exc.problem, 200)}{quoted}; nothing was run. Usage: {USAGE}.")
        print(f"adk-eval-gate: not a valid /eval command ({exc.problem}): nothing was run")
        return 0
    if command.action == "help":
        asked.answer(f"Usage: {USAGE}. See docs/comment-commands.md in adk-eval-gate.")
        return 0
    pull = asked.client.get_json(f"/repos/{asked.repository}/pulls/{asked.number}")
    if pull.get("state") != "open":
        asked.answer("`/eval`: this pull request is not open; nothing was run.")
        return 0
    head = str((pull.get("head") or {}).get("sha") or "")
    pushable = _why_not_pushable(pull, asked.repository) if command.action == "update-goldens" else None
    if why := pushable or _why_not_head(asked, command, head) or _why_not_checkout(checkout, head):
        asked.answer(f"`/eval`: nothing was run: {why}.")
        log.error(f"/eval by {login} was refused: {why}")
        return 1
    react(asked.client, asked.repository, asked.comment["id"], "eyes")
    derived = dataclasses.replace(
        context,
        event={"pull_request": pull, "repository": context.event.get("repository") or {}},
        base_ref=(pull.get("base") or {}).get("ref") or None,
        sha=head,
    )
    acceptance = None
    if command.action == "accept":
        url = asked.comment.get("html_url")
        acceptance = Acceptance(head, login, command.reason, asked.comment["created_at"], url)
    first_line = clip_first_line(asked.comment["body"], 1000)
    note = f"Run by @{login} with “{first_line}” for commit {short_sha(head)}."
    if command.partial:
        note += " A partial run (cases=): not a verdict on the commit, so no status was set."
    return CommentRun(derived, command, acceptance, note, login, str(asked.comment.get("html_url") or ""))


def _why_not_pushable(pull: dict[str, Any], repository: str) -> str | None:
    """`update-goldens` pushes to the pull request's branch: a fork's only with its author's consent."""
    repo = (pull.get("head") or {}).get("repo") or {}
    name = repo.get("full_name") if isinstance(repo, dict) else None
    if not name:
        return "the pull request's branch no longer exists (its fork was deleted), so there is nowhere to push"
    if name != repository and pull.get("maintainer_can_modify") is not True:
        return (
            f"the branch is in the fork {inline(str(name), 100)}, whose author has not allowed edits by maintainers; "
            "they can tick “Allow edits by maintainers”, or run `adk-eval-gate goldens update` themselves"
        )
    return None


def _why_not_head(asked: _Asked, command: EvalCommand, head: str) -> str | None:
    """Why the command does not authorise running `head` (None: it does). Every refusal ends with what to write."""
    again = f"`/eval accept {head.lower()} <reason>`" if command.action == "accept" else f"`/eval {head.lower()}`"
    if command.sha is not None:
        if command.sha == head.lower():
            return None
        if head.lower().startswith(command.sha):
            return (
                f"`{command.sha}` is a short sha, and the pull request's author can make two commits that share "
                f"it; name the full sha of the commit you reviewed, e.g. {again} if that is the head you reviewed"
            )
        return (
            f"the pull request's head is now `{head.lower()}`, not `{command.sha[:40]}`, the commit you named; "
            f"review it, then write {again}"
        )
    why: str | None
    try:
        events = timeline(asked.client, asked.repository, asked.number)
    except GitHubError as exc:
        why = f"its timeline could not be read whole: {exc}"
    else:
        why = head_before(events, head, asked.comment["created_at"])
    if why is None:
        return None
    return (
        f"GitHub cannot show that the head `{short_sha(head)}` was the head when you wrote the comment ({why}); "
        "name the "
        f"commit you reviewed by its full sha, e.g. {again} if that is the one"
    )


def _why_not_checkout(checkout: Path, head: str) -> str | None:
    """The workflow checked the pull request out before we asked GitHub: a push in between must not run."""
    try:
        done = subprocess.run(["git", "rev-parse", "HEAD"], cwd=checkout, capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.SubprocessError):
        done = None
    sha = done.stdout.strip() if done is not None and done.returncode == 0 else ""
    if not sha:
        return "the checked-out commit cannot be read (is the workspace a git checkout?)"
    if sha != head:
        return (
            f"the workflow checked out `{short_sha(sha)}`, not the head `{short_sha(head)}` "
            "(a push raced the checkout); "
            f"review the head, then write `/eval {head.lower()}` again"
        )
    return None
