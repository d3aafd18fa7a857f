"""One sticky pull-request comment per config (and shard group), updated in place.

The comment is found by a hidden marker, through a paginated lookup filtered by author (so a person quoting the
marker is never overwritten). A second marker records the run that wrote it: an older run (a lower run id and
attempt) never overwrites a newer one's comment. A body over GitHub's limit is never sent.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..report.markdown import COMMENT_LIMIT
from .client import GitHubClient, GitHubError

_RUN = re.compile(r"<!-- adk-eval-gate-run: (\d+)\.(\d+) -->")


@dataclass
class PublishOutcome:
    url: str | None
    action: str  # "created" | "updated" | "skipped-newer" | "skipped-no-permission"
    warning: str | None = None


def marker(key: str) -> str:
    return f"<!-- adk-eval-gate: {key} -->"


def stamp(run_id: int, attempt: int) -> str:
    return f"<!-- adk-eval-gate-run: {run_id}.{attempt} -->"


def publish_comment(client: GitHubClient, repository: str, pr_number: int, body: str, *, key: str, run_id: int = 0,
                    attempt: int = 1, author: str | None = "github-actions[bot]") -> PublishOutcome:
    text = f"{marker(key)}\n{stamp(run_id, attempt)}\n{body}"
    if len(text) > COMMENT_LIMIT:
        raise ValueError(f"the comment is {len(text)} characters, over GitHub's {COMMENT_LIMIT}; it was not sent")
    try:
        existing = None
        for comment in client.paginate(f"/repos/{repository}/issues/{pr_number}/comments"):
            if not (comment.get("body") or "").startswith(marker(key)):
                continue
            if author and (comment.get("user") or {}).get("login") != author:
                continue
            existing = comment  # the newest matching comment wins if there are several
        if existing is None:
            created = client.request("POST", f"/repos/{repository}/issues/{pr_number}/comments", json={"body": text}).json()
            return PublishOutcome(created.get("html_url"), "created")
        found = _RUN.search(existing.get("body") or "")
        if found and (int(found.group(1)), int(found.group(2))) > (run_id, attempt):
            return PublishOutcome(existing.get("html_url"), "skipped-newer",
                                  f"a newer run ({found.group(1)}) already reported here; this run's comment was not posted")
        updated = client.request("PATCH", f"/repos/{repository}/issues/comments/{existing['id']}", json={"body": text}).json()
        return PublishOutcome(updated.get("html_url"), "updated")
    except GitHubError as exc:
        if exc.read_only:
            return PublishOutcome(None, "skipped-no-permission",
                                  "the token cannot comment on this pull request (a fork's pull request has a read-only "
                                  "token); the report is in the step summary — see the fork-safe workflow in the README")
        raise


def create_check_run(client: GitHubClient, repository: str, head_sha: str, name: str, passed: bool, title: str,
                     summary: str, details_url: str | None = None) -> str | None:
    """A completed check run carrying the gate's conclusion and the report; returns its URL."""
    body = {"name": name, "head_sha": head_sha, "status": "completed", "conclusion": "success" if passed else "failure",
            "output": {"title": title[:255], "summary": summary[:COMMENT_LIMIT - 1]}}
    if details_url:
        body["details_url"] = details_url
    return client.request("POST", f"/repos/{repository}/check-runs", json=body).json().get("html_url")
