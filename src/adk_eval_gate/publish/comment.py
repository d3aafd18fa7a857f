"""One sticky pull-request comment per config (and shard group), ours alone, updated in place.

Which comment is ours, and the hidden header that says so, is the handshake's (handshake/ours.py): a run reads
our comment before its agents run and writes it here after. A create whose reply was lost may have been stored:
before posting again we look again. A body over GitHub's limit is never sent.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from adk_eval_gate.baseline.comparison_format import Comparison
from adk_eval_gate.core.clip import clip
from adk_eval_gate.core.json_types import JsonObject
from adk_eval_gate.github.client import GitHubClient, GitHubError
from adk_eval_gate.handshake.limits import COMMENT_LIMIT
from adk_eval_gate.handshake.ours import (
    Author,
    CommentPolicy,
    all_comments,
    compose,
    content_digest,
    digest_of,
    is_ours,
    newer_run,
    token_author,
)
from adk_eval_gate.handshake.sticky import StickyData, read_data
from adk_eval_gate.results.results_format import ResultsFile

CREATE_ATTEMPTS = 3


@dataclass
class PublishOutcome:
    url: str | None
    # created | updated | recreated | skipped-newer | skipped-unchanged | skipped-passing | skipped-no-permission
    action: str
    warning: str | None = None


@dataclass(frozen=True)
class CommentTarget:
    """Which comment a report goes to and how: the pull request, the key, the run that writes it, the policy."""

    number: int
    key: str
    run_id: int = 0
    attempt: int = 1
    policy: CommentPolicy = field(default_factory=CommentPolicy)
    # what identifies the report's content without what changes on every run (links, timings); None: the body's
    digest: str | None = None
    data: StickyData | None = None  # what later runs read back (acceptances, the commit of the result)
    author: Author | None = None  # who we are, when the run already asked
    known: list[JsonObject] | None = None  # our comments as the run found them when it started


def publish_comment(
    client: GitHubClient, repository: str, body: str, target: CommentTarget, *, failing: bool = False
) -> PublishOutcome:
    """Post or update our comment as the target's policy says. `failing` is the gate's verdict. The target's
    `known`: our comments as this run found them when it started (with `author`, who we are); the newest is then
    read again by its id instead of listing every comment once more."""
    digest = target.digest or content_digest(body)
    text = compose(target.key, target.run_id, target.attempt, digest, target.data, body)
    try:
        author = target.author or token_author(client, target.policy.author)
        comments_path = f"/repos/{repository}/issues/{target.number}/comments"
        return _Publisher(client, comments_path, repository, target.key, author, target.run_id, target.attempt).publish(
            text, digest, target.policy, failing, target.known
        )
    except GitHubError as exc:
        if exc.read_only:
            return PublishOutcome(
                None,
                "skipped-no-permission",
                "the token cannot comment on this pull request (a fork's pull request has a read-only "
                "token); the report is in the step summary — see the fork-safe workflow in the README",
            )
        raise


@dataclass
class _Publisher:
    client: GitHubClient
    comments_path: str
    repository: str
    key: str
    author: Author
    run_id: int
    attempt: int

    def _is_ours(self, comment: JsonObject) -> bool:
        return is_ours(comment, self.key, self.author)

    def find(self) -> list[JsonObject]:
        """Ours, oldest first."""
        return [comment for comment in self._all() if self._is_ours(comment)]

    def _all(self) -> list[JsonObject]:
        return all_comments(self.client, self.comments_path)

    def _current(self, known: list[JsonObject] | None) -> list[JsonObject]:
        if not known:  # none when the run started: one may have been posted since
            return self.find()
        response = self.client.request("GET", f"/repos/{self.repository}/issues/comments/{known[-1]['id']}", ok=(404,))
        if response.status_code == 404 or not self._is_ours(response.json()):
            return self.find()
        return [*known[:-1], response.json()]

    def publish(
        self, text: str, digest: str, policy: CommentPolicy, failing: bool, known: list[JsonObject] | None = None
    ) -> PublishOutcome:
        ours = self._current(known)
        newest = ours[-1] if ours else None
        if newest is not None and (newer := newer_run(newest, self.run_id, self.attempt)):
            return PublishOutcome(
                newest.get("html_url"),
                "skipped-newer",
                f"a newer run ({newer}) already reported here; this run's comment was not posted",
            )
        if newest is None and policy.when == "failing" and not failing:
            return PublishOutcome(None, "skipped-passing")
        # a status (a run under way, cancelled, failed) is never left standing as if it were the unchanged report
        finished = newest is not None and read_data(newest.get("body")).state == "done"
        if newest is not None and policy.when == "changed" and finished and digest_of(newest) == digest:
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

    def _delete(self, comments: list[JsonObject]) -> None:
        for comment in comments:
            self.client.request("DELETE", f"/repos/{self.repository}/issues/comments/{comment['id']}", ok=(404,))

    def _update(self, comment: JsonObject, text: str) -> JsonObject:
        edited: JsonObject = self.client.request(
            "PATCH", f"/repos/{self.repository}/issues/comments/{comment['id']}", json={"body": text}
        ).json()
        return edited

    def _create(self, text: str) -> JsonObject:
        for attempt in range(CREATE_ATTEMPTS):
            try:
                created: JsonObject = self.client.request("POST", self.comments_path, json={"body": text}).json()
                return created
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
                    if comment.get("body") == text or newer_run(comment, self.run_id, self.attempt)
                    else self._update(comment, text)
                )
        raise AssertionError("unreachable")

    def _author_warning(self, created: JsonObject) -> str | None:
        login = (created.get("user") or {}).get("login")
        if not self.author.assumed or not login or login == self.author.login:
            return None
        return (
            f"this token posts as {login}, which GitHub does not disclose to an App's token: set the comment-author "
            f'input to {login} (or `comment: {{author: "{login}"}}` in the default branch\'s config: a pull '
            "request's own is never read for it) so the next run updates this comment instead of adding another"
        )


@dataclass(frozen=True)
class CheckTarget:
    name: str
    head_sha: str
    passed: bool
    title: str
    check_run: bool = True
    status: bool = False  # a commit status named like the check run (what `/eval` sets)


def create_check_run(
    client: GitHubClient, repository: str, check: CheckTarget, summary: str, details_url: str | None = None
) -> str | None:
    """A completed check run carrying the gate's conclusion and the report; returns its URL."""
    body = {
        "name": check.name,
        "head_sha": check.head_sha,
        "status": "completed",
        "conclusion": "success" if check.passed else "failure",
        "output": {"title": clip(check.title, 255), "summary": clip(summary, COMMENT_LIMIT - 1, marker="")},
    }
    if details_url:
        body["details_url"] = details_url
    # A second completed run of the same name after a lost reply is harmless: GitHub shows the newest.
    made: JsonObject = client.request("POST", f"/repos/{repository}/check-runs", json=body, idempotent=True).json()
    url = made.get("html_url")
    return url if isinstance(url, str) else None


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
