"""The pull request's labels as they are now: a re-run reuses the original event payload, so a label added since
(the override label, most often) is only visible through the API."""

from __future__ import annotations

from adk_eval_gate.github.client import GitHubClient, GitHubError
from adk_eval_gate.github.context import ActionsContext


def current_labels(context: ActionsContext) -> tuple[list[str], str | None]:
    """The labels and, when the API could not be read and the payload's were used instead, a warning."""
    payload = context.labels
    number = (context.pull_request or {}).get("number")
    if not isinstance(number, int) or not (context.token and context.repository):
        return payload, None
    try:
        client = GitHubClient(context.api_url, context.token)
        names = [
            label.get("name", "")
            for label in client.paginate(f"/repos/{context.repository}/issues/{number}/labels")
            if isinstance(label, dict)
        ]
    except GitHubError as exc:
        return payload, (
            f"the pull request's labels could not be read ({exc}); using the event's, which a re-run does not refresh"
        )
    return [name for name in names if name], None
