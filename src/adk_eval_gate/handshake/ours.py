"""Which pull-request comment is ours, and the hidden header that says so (publish/comment.py posts it).

Ours means: it starts with the key's hidden marker *and* its author is the token's owner. Anyone can write the
marker into a comment of their own; such a comment is never edited and never stops ours from being posted. The
owner is `GET /user` for a user's token; an installation token (the workflow's GITHUB_TOKEN, another App's) gets
403 there, so it is the `comment-author` input or the base branch's `comment.author` (handshake/trusted.py: never
the pull request's own config), else the workflow's bot, `github-actions[bot]`.

Hidden markers also record the run that wrote the comment (an older run, by run id and attempt, never overwrites
a newer one's), a digest of the report's content (so `when: changed` can leave an unchanged report alone) and the
data later runs need (handshake/sticky.py); they are read from the comment's leading lines only, never from the
report below them. The handshake reads them before the agents run; publishing writes them after.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

from adk_eval_gate.core.json_types import JsonObject
from adk_eval_gate.github.client import GitHubClient
from adk_eval_gate.handshake.limits import COMMENT_LIMIT
from adk_eval_gate.handshake.sticky import StickyData, data_line, header

WORKFLOW_BOT = "github-actions[bot]"
# comments on one pull request: 50 requests. Which comment is ours (and so whose acceptances count, and whether a
# newer run reported) is read from the whole list or not at all: ours could be the one past the end.
MAX_COMMENTS = 5000
_RUN = re.compile(r"<!-- adk-eval-gate-run: (\d+)\.(\d+) -->")
_DIGEST = re.compile(r"<!-- adk-eval-gate-digest: ([0-9a-f]+) -->")


@dataclass(frozen=True)
class CommentPolicy:
    mode: str = "update"  # update: edit ours in place; recreate: delete ours and post anew (it moves to the bottom)
    when: str = "always"  # always | changed (the report's content differs) | failing (or ours exists to correct)
    author: str | None = None  # the token's login when GitHub cannot say (another App's installation token)


@dataclass(frozen=True)
class Author:
    login: str
    assumed: bool  # an installation token with no configured author: the workflow's bot, not confirmed


def marker(key: str) -> str:
    return f"<!-- adk-eval-gate: {key} -->"


def stamp(run_id: int, attempt: int) -> str:
    return f"<!-- adk-eval-gate-run: {run_id}.{attempt} -->"


def content_digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:20]


def token_author(client: GitHubClient, configured: str | None = None) -> Author:
    if configured:
        return Author(configured, assumed=False)
    response = client.request("GET", "/user", ok=(403,))
    login = response.json().get("login") if response.status_code == 200 else None
    if isinstance(login, str) and login:
        return Author(login, assumed=False)
    return Author(WORKFLOW_BOT, assumed=True)


def compose(key: str, run_id: int, attempt: int, digest: str, data: StickyData | None, visible: str) -> str:
    """Our comment's full text: the hidden header, then what people see."""
    lines = [marker(key), stamp(run_id, attempt), f"<!-- adk-eval-gate-digest: {digest} -->"]
    if data is not None:
        lines.append(data_line(data))
    text = "\n".join([*lines, visible])
    if len(text) > COMMENT_LIMIT:
        raise ValueError(f"the comment is {len(text)} characters, over GitHub's {COMMENT_LIMIT}; it was not sent")
    return text


def _header_text(comment: JsonObject) -> str:
    return "\n".join(header(comment.get("body")))


def newer_run(comment: JsonObject, run_id: int, attempt: int) -> str | None:
    """The run id of a run newer than (run_id, attempt) that wrote `comment`, if one did."""
    found = _RUN.search(_header_text(comment))
    if found and (int(found.group(1)), int(found.group(2))) > (run_id, attempt):
        return found.group(1)
    return None


def digest_of(comment: JsonObject) -> str | None:
    found = _DIGEST.search(_header_text(comment))
    return found.group(1) if found else None


def written_by(comment: JsonObject) -> tuple[int, int] | None:
    """The run (id, attempt) whose stamp our comment carries."""
    found = _RUN.search(_header_text(comment))
    return (int(found.group(1)), int(found.group(2))) if found else None


def is_ours(comment: JsonObject, key: str, author: Author) -> bool:
    return (comment.get("body") or "").startswith(marker(key)) and (comment.get("user") or {}).get(
        "login"
    ) == author.login


def all_comments(client: GitHubClient, comments_path: str) -> list[JsonObject]:
    listed = client.paginate_whole(comments_path, limit=MAX_COMMENTS, what="the pull request's comments")
    return [comment for comment in listed if isinstance(comment, dict)]


def find_ours(client: GitHubClient, repository: str, number: int, key: str, author: Author) -> list[JsonObject]:
    """Our comments under `key` on the pull request, oldest first."""
    listed = all_comments(client, f"/repos/{repository}/issues/{number}/comments")
    return [comment for comment in listed if is_ours(comment, key, author)]


def edit_comment(client: GitHubClient, repository: str, comment_id: int, text: str) -> JsonObject:
    edited: JsonObject = client.request(
        "PATCH", f"/repos/{repository}/issues/comments/{comment_id}", json={"body": text}
    ).json()
    return edited
