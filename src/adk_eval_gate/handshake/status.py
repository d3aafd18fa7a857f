"""The pull request's live status in our sticky comment: "evaluating commit X" as soon as a run starts, and
"cancelled" or "failed" when it stops without reporting (`adk-eval-gate status`, from an `if: cancelled()` /
`if: failure()` step).

A run reads our comment once when it starts: that is where the acceptances given with `/eval accept` are kept, and
the status then costs one request, the edit. The run's end reads that one comment again by its id (an older run
must still never overwrite a newer one's comment), in place of listing every comment as it did before. With no
comment yet nothing is posted for the status alone: the first comment is the first result.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

from adk_eval_gate.baseline.comparison_format import Override
from adk_eval_gate.core.clip import short_sha
from adk_eval_gate.github.client import GitHubClient, GitHubError
from adk_eval_gate.github.context import ActionsContext
from adk_eval_gate.handshake.ours import (
    Author,
    compose,
    content_digest,
    edit_comment,
    find_ours,
    newer_run,
    token_author,
    written_by,
)
from adk_eval_gate.handshake.sticky import Acceptance, StickyData, read_data, result_of, status_text
from adk_eval_gate.handshake.trusted import TrustedSettings


@dataclass
class Sticky:
    """Our comment as the run found it when it started."""

    author: Author
    ours: list[dict[str, Any]]  # oldest first
    data: StickyData = field(default_factory=StickyData)


@dataclass
class PullRequestRun:
    """What a pull request's run carries from its start to its report."""

    sticky: Sticky | None = None
    acceptance: Acceptance | None = None  # a new `/eval accept`, for the commit this run evaluates
    note: str | None = None  # who asked for this run, shown under the verdict
    commit_status: bool = False  # set the verdict as a commit status on the commit evaluated
    partial: bool = False  # `/eval cases=…`: no verdict on the commit
    trusted: TrustedSettings | None = None  # our login and the override label, from the inputs and the base branch
    warnings: list[str] = field(default_factory=list)


def pull_number(context: ActionsContext) -> int | None:
    """The pull request a run is about: the pull_request event's, or the issue_comment event's issue."""
    number = (context.pull_request or {}).get("number")
    if number is None and (context.event.get("issue") or {}).get("pull_request"):
        number = context.event["issue"].get("number")
    return number if isinstance(number, int) and not isinstance(number, bool) else None


def with_pull_request(context: ActionsContext) -> ActionsContext:
    """An `/eval` run's context carries the issue, not the pull request: its base commit, where the settings that
    decide which comment is ours are read (handshake/trusted.py), comes from the API."""
    number = pull_number(context)
    if context.pull_request is not None or number is None or not (context.token and context.repository):
        return context
    pull = context.client().get_json(f"/repos/{context.repository}/pulls/{number}")
    return (
        dataclasses.replace(context, event={**context.event, "pull_request": pull})
        if isinstance(pull, dict)
        else context
    )


def read_sticky(client: GitHubClient, repository: str, number: int, key: str, author_login: str | None) -> Sticky:
    author = token_author(client, author_login)
    ours = find_ours(client, repository, number, key, author)
    return Sticky(author, ours, read_data(ours[-1].get("body")) if ours else StickyData())


def acceptance_for(run: PullRequestRun | None, head_sha: str | None) -> Override | None:
    """An `/eval accept` for exactly this commit: the one this run was asked for, or one our comment kept."""
    if run is None or not head_sha:
        return None
    found = run.acceptance if run.acceptance and run.acceptance.sha == head_sha else None
    if found is None and run.sticky is not None:
        found = run.sticky.data.accepted(head_sha)
    if found is None:
        return None
    return Override(kind="comment", by=found.login, at=found.at, reason=found.reason, sha=found.sha, url=found.url)


def reported_data(run: PullRequestRun | None, head_sha: str | None) -> StickyData:
    """What our comment keeps once the run has reported: the result's commit and every acceptance, a new one too."""
    kept = run.sticky.data if run and run.sticky else StickyData()
    acceptances = kept.with_acceptance(run.acceptance) if run and run.acceptance else kept.acceptances
    return StickyData(state="done", result_sha=head_sha, acceptances=acceptances)


def announce(
    client: GitHubClient, context: ActionsContext, key: str, sticky: Sticky, head_sha: str, now: datetime | None = None
) -> bool:
    """Says in our comment that `head_sha` is being evaluated; the previous result stays, collapsed."""
    if not sticky.ours:
        return False
    newest = sticky.ours[-1]
    run_id, attempt = int(context.run_id or 0), context.attempt
    if newer_run(newest, run_id, attempt):
        return False
    started = (now or datetime.now(timezone.utc)).strftime("%Y-%m-%dT%H:%M:%SZ")
    data = StickyData("running", sticky.data.result_sha, head_sha, started, context.run_url, sticky.data.acceptances)
    visible = status_text(data, result_of(newest.get("body")), attempt)
    edited = edit_comment(
        client,
        context.repository or "",
        newest["id"],
        compose(key, run_id, attempt, content_digest(visible), data, visible),
    )
    sticky.ours[-1] = edited
    return True


def start_pull_request_run(
    context: ActionsContext, key: str, author_login: str | None, head_sha: str, *, progress: bool
) -> PullRequestRun:
    """Reads our comment (and its acceptances) and, unless `comment.progress` is off, shows the live status."""
    run = PullRequestRun()
    client = context.client()
    try:
        run.sticky = read_sticky(client, context.repository or "", pull_number(context) or 0, key, author_login)
        if progress:
            announce(client, context, key, run.sticky, head_sha)
    except GitHubError as exc:
        run.warnings.append(f"the pull request comment could not be read or marked as evaluating: {exc}")
    return run


def mark_stopped(context: ActionsContext, key: str, author_login: str | None, state: str) -> str:
    """`cancelled` or `failed` for this run's status, if our comment still shows this run under way."""
    number = pull_number(context)
    if number is None or not (context.token and context.repository):
        return "not a pull request's run (or no token): nothing to mark"
    client = context.client()
    ours = find_ours(client, context.repository, number, key, token_author(client, author_login))
    if not ours:
        return "no adk-eval-gate comment on this pull request: nothing to mark"
    newest, run = ours[-1], (int(context.run_id or 0), context.attempt)
    data = read_data(newest.get("body"))
    if data.state != "running" or written_by(newest) != run:
        return "the comment does not show this run under way (it reported, or a newer run took over): left as it is"
    stopped = dataclasses.replace(data, state=state)
    visible = status_text(stopped, result_of(newest.get("body")), run[1])
    text = compose(key, run[0], run[1], content_digest(visible), stopped, visible)
    edited = edit_comment(client, context.repository, newest["id"], text)
    return f"marked the evaluation of {short_sha(data.evaluating)} as {state}: {edited.get('html_url')}"
