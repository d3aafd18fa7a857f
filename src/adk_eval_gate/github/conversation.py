"""The pull request as a conversation, through the REST API: who may command the gate, which commit a comment
speaks about, reactions, replies, commit statuses, and who added a label when.

Who may: the repository permission GitHub computes (`collaborators/{username}/permission`), never the comment's
`author_association`, which says how someone relates to the repository, not what they may do.

Which commit: only what GitHub's servers recorded counts. A commit's dates are written by whoever made it, so a
push can claim any date. The timeline records a force-push (`head_ref_force_pushed`) with the server's time and the
commit it moved the head to, but an ordinary push only as `committed` events dated by the committer: after an
ordinary push nothing proves when the head arrived, and the commenter must name the commit.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from adk_eval_gate.core.clip import clip
from adk_eval_gate.core.json_types import JsonObject
from adk_eval_gate.github.client import GitHubClient, GitHubError

WRITERS = frozenset({"admin", "maintain", "write"})
MAX_TIMELINE = 3000  # events: 30 requests; a longer timeline is refused as proof, never read in part
# Events after which the head is what the event says (GitHub puts the new head in commit_id).
_HEAD_SET = frozenset({"head_ref_force_pushed", "head_ref_restored"})


def server_time(text: object) -> datetime | None:
    if not isinstance(text, str):
        return None
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None


def permission(client: GitHubClient, repository: str, login: str) -> str:
    """admin, maintain, write, triage, read or none; someone GitHub does not know has none."""
    response = client.request("GET", f"/repos/{repository}/collaborators/{login}/permission", ok=(404,))
    if response.status_code == 404:
        return "none"
    data = response.json()
    # role_name names maintain and triage, which the legacy `permission` folds into write and read
    role, legacy = data.get("role_name"), data.get("permission")
    return role if role in WRITERS | {"triage", "read", "none"} else legacy if isinstance(legacy, str) else "none"


def react(client: GitHubClient, repository: str, comment_id: int, content: str = "eyes") -> None:
    # The same reaction twice is one reaction (GitHub answers 200), so a retry after a lost reply is harmless.
    client.request(
        "POST",
        f"/repos/{repository}/issues/comments/{comment_id}/reactions",
        json={"content": content},
        idempotent=True,
    )


def reply(client: GitHubClient, repository: str, number: int, text: str) -> str | None:
    """A new comment, posted once: a reply whose answer was lost is not worth a second copy."""
    posted = client.request("POST", f"/repos/{repository}/issues/{number}/comments", json={"body": text}).json()
    url = posted.get("html_url")
    return url if isinstance(url, str) else None


def set_status(
    client: GitHubClient,
    repository: str,
    sha: str,
    *,
    passed: bool,
    context: str,
    description: str,
    target_url: str | None = None,
) -> None:
    body = {"state": "success" if passed else "failure", "context": context, "description": clip(description, 140)}
    if target_url:
        body["target_url"] = target_url
    # A status is per commit and context, the newest wins: repeating it after a lost reply changes nothing.
    client.request("POST", f"/repos/{repository}/statuses/{sha}", json=body, idempotent=True)


def timeline(client: GitHubClient, repository: str, number: int) -> list[JsonObject]:
    """The whole timeline, or GitHubError: a force-push after the last event read would be invisible, so a
    timeline cut short proves nothing (the bound keeps a hostile pull request's thousands of events cheap)."""
    path = f"/repos/{repository}/issues/{number}/timeline"
    events = client.paginate_whole(path, limit=MAX_TIMELINE, what="the pull request's timeline")
    return [event for event in events if isinstance(event, dict)]


@dataclass(frozen=True)
class Labelled:
    login: str
    at: str


def label_added(client: GitHubClient, repository: str, number: int, label: str) -> Labelled | None:
    """Who added `label` last, and when (the server's time); None when the timeline cannot say."""
    try:
        events = timeline(client, repository, number)
    except GitHubError:
        return None
    found = None
    for event in events:
        if event.get("event") == "labeled" and (event.get("label") or {}).get("name") == label:
            login = (event.get("actor") or {}).get("login")
            if isinstance(login, str) and isinstance(event.get("created_at"), str):
                found = Labelled(login, event["created_at"])
    return found


def head_before(events: list[JsonObject], head_sha: str, comment_at: str) -> str | None:
    """Why the head `head_sha` is not proven to be the head the comment saw, or None when it is.

    Proof: the last event that set the head (a force-push, with the server's time) set it to `head_sha` and came
    before the comment. Since then the head can only have moved by an ordinary push, which always changes it, and
    it has not (it is still `head_sha`); it could only come back to the same commit by another force-push."""
    said = server_time(comment_at)
    if said is None:
        return "the comment has no creation time"
    setting = [e for e in events if e.get("event") in _HEAD_SET]
    if not setting:
        return "GitHub records no time for the push that made it the head (an ordinary push)"
    last = setting[-1]
    when = server_time(last.get("created_at"))
    if (last.get("commit_id") or "").lower() != head_sha.lower():
        return "GitHub records no time for the push that made it the head (an ordinary push after a force-push)"
    if when is None or when >= said:
        return "it was force-pushed after the comment was written"
    return None
