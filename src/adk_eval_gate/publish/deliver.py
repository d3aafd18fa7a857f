"""The one path a report takes to GitHub, whichever command produced it (`ci`, `merge`, `publish`): the sticky
comment, the check run and the commit status on the head commit, the step summary. Files are written before this
runs, so a GitHub API failure never loses the run."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from adk_eval_gate.github.client import GitHubClient, GitHubError
from adk_eval_gate.github.conversation import set_status
from adk_eval_gate.publish.comment import Author, CommentPolicy, create_check_run, publish_comment
from adk_eval_gate.publish.sticky import StickyData
from adk_eval_gate.report.outputs import write_step_summary


@dataclass(frozen=True)
class CommentTarget:
    number: int
    key: str
    run_id: int
    attempt: int
    policy: CommentPolicy
    digest: str | None
    data: StickyData | None = None  # what later runs read back (acceptances, the commit of the result)
    author: Author | None = None  # who we are, when the run already asked
    known: list[dict[str, Any]] | None = None  # our comments as the run found them when it started


@dataclass(frozen=True)
class CheckTarget:
    name: str
    head_sha: str
    passed: bool
    title: str
    check_run: bool = True
    status: bool = False  # a commit status named like the check run (what `/eval` sets)


@dataclass
class Delivered:
    comment_url: str = ""
    action: str | None = None
    notes: list[str] = field(default_factory=list)  # what did not reach GitHub, said as warnings


def deliver(
    client: GitHubClient,
    repository: str,
    markdown: str,
    *,
    failing: bool,
    comment: CommentTarget | None,
    check: CheckTarget | None,
    run_url: str | None,
    step_summary: str | None,
    summary_note: str = "",
    comment_required: bool = False,
) -> Delivered:
    """`summary_note` follows the report in the step summary only (where the HTML report is). `comment_required`:
    a command whose whole job is the comment (`publish`) fails when it cannot post."""
    delivered = Delivered()
    if comment is not None:
        try:
            outcome = publish_comment(
                client,
                repository,
                comment.number,
                markdown,
                key=comment.key,
                run_id=comment.run_id,
                attempt=comment.attempt,
                policy=comment.policy,
                failing=failing,
                digest=comment.digest,
                data=comment.data,
                author=comment.author,
                known=comment.known,
            )
        except (GitHubError, ValueError) as exc:
            if comment_required:
                raise
            delivered.notes.append(f"the pull request comment was not posted: {exc}")
        else:
            delivered.comment_url, delivered.action = outcome.url or "", outcome.action
            if outcome.warning:
                delivered.notes.append(outcome.warning)
    if check is not None and check.check_run:
        try:
            create_check_run(
                client, repository, check.head_sha, check.name, check.passed, check.title, markdown, run_url
            )
        except GitHubError as exc:
            delivered.notes.append(f"the check run was not created: {exc}")
    if check is not None and check.status:
        try:
            set_status(
                client,
                repository,
                check.head_sha,
                passed=check.passed,
                context=check.name,
                description=check.title,
                target_url=run_url,
            )
        except GitHubError as exc:
            delivered.notes.append(f"the commit status was not set: {exc}")
    if step_summary:
        write_step_summary(Path(step_summary), markdown + summary_note)
    return delivered
