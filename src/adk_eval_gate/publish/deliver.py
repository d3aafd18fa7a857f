"""The one path a report takes to GitHub, whichever command produced it (`ci`, `merge`, `publish`): the sticky
comment, the check run and the commit status on the head commit, the step summary. Files are written before this
runs, so a GitHub API failure never loses the run."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from adk_eval_gate.github.client import GitHubClient, GitHubError
from adk_eval_gate.github.conversation import set_status
from adk_eval_gate.publish.comment import CheckTarget, CommentTarget, create_check_run, publish_comment
from adk_eval_gate.report.outputs import write_step_summary

__all__ = ["CheckTarget", "CommentTarget", "Delivered", "Destinations", "deliver"]


@dataclass(frozen=True)
class Destinations:
    """Where one report goes: our comment, the check run and commit status, the step summary. `summary_note`
    follows the report in the step summary only (where the HTML report is). `comment_required`: a command whose
    whole job is the comment (`publish`) fails when it cannot post."""

    comment: CommentTarget | None
    check: CheckTarget | None
    run_url: str | None
    step_summary: str | None
    summary_note: str = ""
    comment_required: bool = False


@dataclass
class Delivered:
    comment_url: str = ""
    action: str | None = None
    notes: list[str] = field(default_factory=list)  # what did not reach GitHub, said as warnings


def deliver(client: GitHubClient, repository: str, markdown: str, where: Destinations, *, failing: bool) -> Delivered:
    """Each destination in turn; what one of them refuses is a note, and the others still get the report."""
    delivered = Delivered()
    _comment(client, repository, markdown, where, delivered, failing=failing)
    if where.check is not None and where.check.check_run:
        try:
            create_check_run(client, repository, where.check, markdown, where.run_url)
        except GitHubError as exc:
            delivered.notes.append(f"the check run was not created: {exc}")
    if where.check is not None and where.check.status:
        _status(client, repository, where.check, where.run_url, delivered)
    if where.step_summary:
        write_step_summary(Path(where.step_summary), markdown + where.summary_note)
    return delivered


def _comment(
    client: GitHubClient, repository: str, markdown: str, where: Destinations, delivered: Delivered, *, failing: bool
) -> None:
    if where.comment is None:
        return
    try:
        outcome = publish_comment(client, repository, markdown, where.comment, failing=failing)
    except (GitHubError, ValueError) as exc:
        if where.comment_required:
            raise
        delivered.notes.append(f"the pull request comment was not posted: {exc}")
    else:
        delivered.comment_url, delivered.action = outcome.url or "", outcome.action
        if outcome.warning:
            delivered.notes.append(outcome.warning)


def _status(
    client: GitHubClient, repository: str, check: CheckTarget, run_url: str | None, delivered: Delivered
) -> None:
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
