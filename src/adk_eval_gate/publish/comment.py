"""One sticky pull-request comment per config (and shard group), ours alone, updated in place.

Ours means: it starts with the key's hidden marker *and* its author is the token's owner. Anyone can write the
marker into a comment of their own; such a comment is never edited and never stops ours from being posted. The
owner is `GET /user` for a user's token; an installation token (the workflow's GITHUB_TOKEN, another App's) gets
403 there, so it is the `comment-author` input or the base branch's `comment.author` (publish/trusted.py: never
the pull request's own config), else the workflow's bot, `github-actions[bot]`.

Hidden markers also record the run that wrote the comment (an older run, by run id and attempt, never overwrites
a newer one's), a digest of the report's content (so `when: changed` can leave an unchanged report alone) and the
data later runs need (publish/sticky.py); they are read from the comment's leading lines only, never from the report
below them. A create whose reply was lost may have been stored: before posting again we look again. A body over
GitHub's limit is never sent.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from typing import Any

from adk_eval_gate.baseline.models import Comparison
from adk_eval_gate.core.clip import clip
from adk_eval_gate.github.client import GitHubClient, GitHubError
from adk_eval_gate.publish.sticky import StickyData, data_line, header, read_data
from adk_eval_gate.report.markdown import COMMENT_LIMIT
from adk_eval_gate.results.models import ResultsFile

WORKFLOW_BOT = "github-actions[bot]"
CREATE_ATTEMPTS = 3
# comments on one pull request: 50 requests. Which comment is ours (and so whose acceptances count, and whether a
# newer run reported) is read from the whole list or not at all: ours could be the one past the end.
MAX_COMMENTS = 5000
_RUN = re.compile(r"<!-- adk-eval-gate-run: (\d+)\.(\d+) -->")
_DIGEST = re.compile(r"<!-- adk-eval-gate-digest: ([0-9a-f]+) -->")


@dataclass
class PublishOutcome:
    url: str | None
    # created | updated | recreated | skipped-newer | skipped-unchanged | skipped-passing | skipped-no-permission
    action: str
    warning: str | None = None


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


def _header_text(comment: dict[str, Any]) -> str:
    return "\n".join(header(comment.get("body")))


def _newer_run(comment: dict[str, Any], run_id: int, attempt: int) -> str | None:
    found = _RUN.search(_header_text(comment))
    if found and (int(found.group(1)), int(found.group(2))) > (run_id, attempt):
        return found.group(1)
    return None


def _digest_of(comment: dict[str, Any]) -> str | None:
    found = _DIGEST.search(_header_text(comment))
    return found.group(1) if found else None


def publish_comment(
    client: GitHubClient,
    repository: str,
    pr_number: int,
    body: str,
    *,
    key: str,
    run_id: int = 0,
    attempt: int = 1,
    policy: CommentPolicy = CommentPolicy(),
    failing: bool = False,
    digest: str | None = None,
    data: StickyData | None = None,
    author: Author | None = None,
    known: list[dict[str, Any]] | None = None,
) -> PublishOutcome:
    """Post or update our comment as `policy` says. `failing` is the gate's verdict; `digest` identifies the report's
    content without what changes on every run (links, timings); by default the body's own digest. `known`: our
    comments as this run found them when it started (with `author`, who we are); the newest is then read again by
    its id instead of listing every comment once more."""
    digest = digest or content_digest(body)
    text = compose(key, run_id, attempt, digest, data, body)
    try:
        author = author or token_author(client, policy.author)
        return _Publisher(
            client, f"/repos/{repository}/issues/{pr_number}/comments", repository, key, author, run_id, attempt
        ).publish(text, digest, policy, failing, known)
    except GitHubError as exc:
        if exc.read_only:
            return PublishOutcome(
                None,
                "skipped-no-permission",
                "the token cannot comment on this pull request (a fork's pull request has a read-only "
                "token); the report is in the step summary — see the fork-safe workflow in the README",
            )
        raise


def find_ours(client: GitHubClient, repository: str, number: int, key: str, author: Author) -> list[dict[str, Any]]:
    """Our comments under `key` on the pull request, oldest first."""
    return _Publisher(client, f"/repos/{repository}/issues/{number}/comments", repository, key, author, 0, 1).find()


def written_by(comment: dict[str, Any]) -> tuple[int, int] | None:
    """The run (id, attempt) whose stamp our comment carries."""
    found = _RUN.search(_header_text(comment))
    return (int(found.group(1)), int(found.group(2))) if found else None


def newer_run(comment: dict[str, Any], run_id: int, attempt: int) -> str | None:
    """The run id of a run newer than (run_id, attempt) that wrote `comment`, if one did."""
    return _newer_run(comment, run_id, attempt)


def edit_comment(client: GitHubClient, repository: str, comment_id: int, text: str) -> dict[str, Any]:
    return client.request("PATCH", f"/repos/{repository}/issues/comments/{comment_id}", json={"body": text}).json()


@dataclass
class _Publisher:
    client: GitHubClient
    comments_path: str
    repository: str
    key: str
    author: Author
    run_id: int
    attempt: int

    def _is_ours(self, comment: dict[str, Any]) -> bool:
        return (comment.get("body") or "").startswith(marker(self.key)) and (comment.get("user") or {}).get(
            "login"
        ) == self.author.login

    def find(self) -> list[dict[str, Any]]:
        """Ours, oldest first."""
        return [comment for comment in self._all() if self._is_ours(comment)]

    def _all(self) -> list[dict[str, Any]]:
        listed = self.client.paginate_whole(self.comments_path, limit=MAX_COMMENTS, what="the pull request's comments")
        return [comment for comment in listed if isinstance(comment, dict)]

    def _current(self, known: list[dict[str, Any]] | None) -> list[dict[str, Any]]:
        if not known:  # none when the run started: one may have been posted since
            return self.find()
        response = self.client.request("GET", f"/repos/{self.repository}/issues/comments/{known[-1]['id']}", ok=(404,))
        if response.status_code == 404 or not self._is_ours(response.json()):
            return self.find()
        return [*known[:-1], response.json()]

    def publish(
        self, text: str, digest: str, policy: CommentPolicy, failing: bool, known: list[dict[str, Any]] | None = None
    ) -> PublishOutcome:
        ours = self._current(known)
        newest = ours[-1] if ours else None
        if newest is not None and (newer := _newer_run(newest, self.run_id, self.attempt)):
            return PublishOutcome(
                newest.get("html_url"),
                "skipped-newer",
                f"a newer run ({newer}) already reported here; this run's comment was not posted",
            )
        if newest is None and policy.when == "failing" and not failing:
            return PublishOutcome(None, "skipped-passing")
        # a status (a run under way, cancelled, failed) is never left standing as if it were the unchanged report
        finished = newest is not None and read_data(newest.get("body")).state == "done"
        if newest is not None and policy.when == "changed" and finished and _digest_of(newest) == digest:
            return PublishOutcome(newest.get("html_url"), "skipped-unchanged")
        if newest is not None and policy.mode == "update":
            updated = self._update(newest, text)
            # duplicates of ours (two runs that raced to create, or an older version's) go, so one comment remains
            self._delete(ours[:-1])
            return PublishOutcome(updated.get("html_url"), "updated")
        self._delete(ours)
        created = self._create(text)
        return PublishOutcome(
            created.get("html_url"), "recreated" if ours else "created", self._author_warning(created)
        )

    def _delete(self, comments: list[dict[str, Any]]) -> None:
        for comment in comments:
            self.client.request("DELETE", f"/repos/{self.repository}/issues/comments/{comment['id']}", ok=(404,))

    def _update(self, comment: dict[str, Any], text: str) -> dict[str, Any]:
        return self.client.request(
            "PATCH", f"/repos/{self.repository}/issues/comments/{comment['id']}", json={"body": text}
        ).json()

    def _create(self, text: str) -> dict[str, Any]:
        for attempt in range(CREATE_ATTEMPTS):
            try:
                return self.client.request("POST", self.comments_path, json={"body": text}).json()
            except GitHubError as exc:
                if not exc.maybe_applied or attempt == CREATE_ATTEMPTS - 1:
                    raise
            self.client.pause(attempt)
            # GitHub may have stored the comment and lost only the reply: posting again would make a second one.
            stored = [
                comment
                for comment in self._all()
                if self._is_ours(comment)
                # an App's token we could not name: this very text (its run stamp included) is the one we sent
                or (self.author.assumed and comment.get("body") == text)
            ]
            if stored:
                comment = stored[-1]
                return (
                    comment
                    if comment.get("body") == text or _newer_run(comment, self.run_id, self.attempt)
                    else self._update(comment, text)
                )
        raise AssertionError("unreachable")

    def _author_warning(self, created: dict[str, Any]) -> str | None:
        login = (created.get("user") or {}).get("login")
        if not self.author.assumed or not login or login == self.author.login:
            return None
        return (
            f"this token posts as {login}, which GitHub does not disclose to an App's token: set the comment-author "
            f'input to {login} (or `comment: {{author: "{login}"}}` in the default branch\'s config: a pull '
            "request's own is never read for it) so the next run updates this comment instead of adding another"
        )


def create_check_run(
    client: GitHubClient,
    repository: str,
    head_sha: str,
    name: str,
    passed: bool,
    title: str,
    summary: str,
    details_url: str | None = None,
) -> str | None:
    """A completed check run carrying the gate's conclusion and the report; returns its URL."""
    body = {
        "name": name,
        "head_sha": head_sha,
        "status": "completed",
        "conclusion": "success" if passed else "failure",
        "output": {"title": clip(title, 255), "summary": clip(summary, COMMENT_LIMIT - 1, marker="")},
    }
    if details_url:
        body["details_url"] = details_url
    # A second completed run of the same name after a lost reply is harmless: GitHub shows the newest.
    return client.request("POST", f"/repos/{repository}/check-runs", json=body, idempotent=True).json().get("html_url")


def report_digest(comparison: Comparison, results: ResultsFile) -> str:
    """What `comment.when: changed` compares: verdicts, scores and statuses, not links, timings or ages."""

    def score(value: float | None) -> float | None:
        return None if value is None else round(value, 4)

    content = {
        # the failures' sentences: the digest of a comment posted before they were data stays the same
        "gate": [
            comparison.verdict,
            comparison.gate.reason,
            [f.text for f in comparison.gate.failures],
            comparison.gate.overridden,
        ],
        "summaries": [
            [s.agent, s.eval_set_id, s.criterion, s.verdict, score(s.baseline), score(s.current)]
            for s in comparison.summaries
        ],
        "rows": [
            [r.agent, r.eval_set_id, r.eval_id, r.criterion, r.verdict, score(r.baseline), score(r.current)]
            for r in comparison.rows
        ],
        "cases": [[s.agent, s.eval_set_id, c.eval_id, c.status] for s in results.eval_sets for c in s.cases],
    }
    return content_digest(json.dumps(content, sort_keys=True))
