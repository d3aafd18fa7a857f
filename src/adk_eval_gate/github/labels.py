"""The pull request's labels as they are now, as GitHub's API confirms them.

A label overrides the gate, so only the API counts: a re-run reuses the original event payload, whose labels may
have been removed since (and a label added since is only visible through the API). Labels the API cannot confirm
(no token, an error, a list cut short) are none at all, with a line saying why: an override fails closed.
"""

from __future__ import annotations

from adk_eval_gate.github.client import GitHubClient, GitHubError
from adk_eval_gate.github.context import ActionsContext

MAX_LABELS = 1000  # GitHub allows 100 labels on an issue; a longer list is not GitHub's answer
# What the report says when the labels could not be confirmed (the log line says why).
UNCONFIRMED = "The labels could not be confirmed with GitHub's API, so no label overrides the gate on this run."


def current_labels(context: ActionsContext) -> tuple[list[str], str | None]:
    """The labels now, and, when the API could not confirm them (so none counts), a line saying why."""
    number = (context.pull_request or {}).get("number")
    if not isinstance(number, int) or not (context.token and context.repository):
        stale = context.labels
        if not stale:
            return [], None
        return [], (
            f"the event lists {len(stale)} label(s), but without a token and repository they cannot be confirmed "
            "with GitHub's API, so no label overrides the gate on this run"
        )
    try:
        client = GitHubClient(context.api_url, context.token)
        path = f"/repos/{context.repository}/issues/{number}/labels"
        found = client.paginate_whole(path, limit=MAX_LABELS, what="the pull request's labels")
    except GitHubError as exc:
        return [], (
            f"the pull request's labels could not be read ({exc}), so no label overrides the gate on this run "
            "(the event's own labels may have been removed since); re-run the job once GitHub answers"
        )
    names = [label.get("name") for label in found if isinstance(label, dict)]
    return [name for name in names if isinstance(name, str) and name], None
