"""`branch` store: baselines on a data branch, written through the contents API on pushes to the default branch.

Layout: `<directory>/<commit sha>.json` (a slim results file) for every baselined commit, and
`<directory>/latest.json` pointing at the newest. A pull request reads the entry of its merge-base commit; when
there is none (the base moved on without a baseline run), it reads the newest and says how old it is.
"""

from __future__ import annotations

import base64
import json
from datetime import datetime, timezone
from urllib.parse import quote

import requests
from pydantic import ValidationError

from adk_eval_gate.baseline.stores.stored_baseline import (
    LoadedBaseline,
    LoadOutcome,
    PendingHistory,
    RawHistory,
    identity_of,
    merge_base_candidates,
    slim,
)
from adk_eval_gate.config.loader import Workflow
from adk_eval_gate.config.workflow_settings import BranchBaseline
from adk_eval_gate.core.clip import short_sha
from adk_eval_gate.core.redaction import redact  # base64 hides a secret from the client's own redaction
from adk_eval_gate.github.client import GitHubError
from adk_eval_gate.github.context import ActionsContext
from adk_eval_gate.results.results_format import ResultsFile

HISTORY_FILE = "history.db"
LEGACY_HISTORY_FILE = "history.json"  # earlier versions': read until the next record writes history.db
# The contents API takes files up to 100 MB (the body carries them base64-encoded, a third larger again).
MAX_CONTENTS_BYTES = 100 * 1000 * 1000


class BranchStore:
    def __init__(self, settings: BranchBaseline, workflow: Workflow, context: ActionsContext) -> None:
        self.settings, self.workflow, self.context = settings, workflow, context
        self.client = context.client()
        self.repo = context.repository

    def _path(self, name: str) -> str:
        return f"{self.settings.directory.strip('/')}/{name}"

    def _get(self, path: str) -> tuple[bytes, str] | None:
        response = self.client.request(
            "GET", f"/repos/{self.repo}/contents/{quote(path)}", params={"ref": self.settings.branch}, ok=(404,)
        )
        if response.status_code == 404:
            return None
        data = response.json()
        content = base64.b64decode(data.get("content") or "") if data.get("encoding") == "base64" else b""
        if not content and data.get("download_url"):  # files over 1 MB come without inline content
            content = self.client.request("GET", data["download_url"], accept="application/vnd.github.raw").content
        return content, data.get("sha", "")

    def _read_results(self, path: str) -> ResultsFile | None:
        found = self._get(path)
        if found is None:
            return None
        try:
            return ResultsFile.model_validate_json(found[0])
        except ValidationError:
            raise GitHubError(
                "GET", path, None, "the stored baseline is not a results file this version can read"
            ) from None

    def load(self) -> LoadOutcome:
        if not self.repo:
            return LoadOutcome(None, ["the branch store needs GITHUB_REPOSITORY (and a token): no baseline loaded"])
        branch = self.settings.branch
        try:
            for sha in merge_base_candidates(self.context, self.workflow.base_dir):
                results = self._read_results(self._path(f"{sha}.json"))
                if results is not None:
                    found = identity_of(results, f"branch {branch}: {short_sha(sha)}")
                    return LoadOutcome(LoadedBaseline(results, found))
            pointer = self._get(self._path("latest.json"))
            if pointer is None:
                return LoadOutcome(
                    None, [f"no baseline on branch {branch} yet: it is written on pushes to the default branch"]
                )
            latest = json.loads(pointer[0])
            results = self._read_results(latest["path"])
            if results is None:
                return LoadOutcome(None, [f"branch {branch}: latest.json points at a missing {latest['path']}"])
        except GitHubError as exc:
            return LoadOutcome(None, [f"baseline unavailable: {exc}"], error=str(exc))
        except (ValueError, KeyError):
            return LoadOutcome(None, [f"branch {branch}: latest.json is not a valid pointer"])
        source = f"branch {branch}: latest ({short_sha(results.git.sha, '?')})"
        identity = identity_of(results, source, exact_base=False)
        newest = short_sha(results.git.sha, "an unknown commit")
        warning = f"no baseline for this pull request's merge-base; using the newest, from {newest}"
        if identity.age_days is not None:
            warning += f", {identity.age_days:.1f} days old"
        return LoadOutcome(LoadedBaseline(results, identity), [warning])

    def read_history(self) -> RawHistory:
        path = self._path(HISTORY_FILE)
        where = f"{path} on branch {self.settings.branch}"
        if not self.repo:
            return RawHistory(where, note="the branch store needs GITHUB_REPOSITORY (and a token): no history read")
        try:
            found = self._get(path)
            if found is None:  # an earlier version's history.json, if any: migrated by the next record
                legacy = self._path(LEGACY_HISTORY_FILE)
                if (old := self._get(legacy)) is not None:
                    return RawHistory(f"{legacy} on branch {self.settings.branch}", old[0], legacy=True)
        except GitHubError as exc:
            return RawHistory(where, error=str(exc))
        return RawHistory(where) if found is None else RawHistory(where, found[0], version=found[1])

    def _write_history(self, data: bytes, read: RawHistory) -> str:
        """Replaces exactly the version that was read (or creates the database, when an old history.json was read):
        a concurrent push that wrote in between makes this fail loudly (409) instead of dropping its record. The
        new blob's sha. The database holds names, hashes and numbers only, written as they are."""
        path = self._path(HISTORY_FILE)
        self._check_history_size(data)
        body = {
            "message": "adk-eval-gate: history",
            "content": base64.b64encode(data).decode(),
            "branch": self.settings.branch,
        }
        if read.version and not read.legacy:
            body["sha"] = read.version
        response = self.client.request("PUT", f"/repos/{self.repo}/contents/{quote(path)}", json=body, ok=(409, 422))
        if response.status_code in (409, 422):
            now = self._get(path)
            if now is not None and now[0] == data:  # our own write, whose reply was lost
                return now[1]
            raise GitHubError(
                "PUT", path, response.status_code, "the history changed since it was read (another push wrote it)"
            )
        return _blob_sha(response)

    def _check_history_size(self, data: bytes) -> None:
        if len(data) > MAX_CONTENTS_BYTES:
            raise GitHubError(
                "PUT",
                self._path(HISTORY_FILE),
                None,
                f"the history is {len(data):,} bytes, over the {MAX_CONTENTS_BYTES:,} GitHub's contents API takes; "
                "lower history.max_records, or keep the baseline in the artifact store",
            )

    def _put(self, path: str, text: str, message: str) -> tuple[bytes | None, str]:
        """(what the file held before, or None when it was new; the new blob's sha)."""
        for attempt in range(2):
            existing = self._get(path)
            body = {
                "message": message,
                "content": base64.b64encode(redact(text).encode()).decode(),
                "branch": self.settings.branch,
            }
            if existing is not None:
                body["sha"] = existing[1]
            response = self.client.request("PUT", f"/repos/{self.repo}/contents/{quote(path)}", json=body, ok=(409,))
            if response.status_code != 409:
                return (existing[0] if existing is not None else None), _blob_sha(response)
            if attempt:  # a concurrent writer won twice: give up loudly rather than overwrite blindly
                raise GitHubError("PUT", path, 409, "the file changed under us twice")
        raise AssertionError("unreachable")

    def _restore(self, path: str, old: bytes | None, blob: str) -> None:
        """`path` as it was before this push wrote `blob` over it: its old content, or no file."""
        message = f"adk-eval-gate: undo {path}: the baseline and its history are stored together or not at all"
        body = {"message": message, "sha": blob, "branch": self.settings.branch}
        if old is None:
            self.client.request("DELETE", f"/repos/{self.repo}/contents/{quote(path)}", json=body)
        else:
            body["content"] = base64.b64encode(old).decode()
            self.client.request("PUT", f"/repos/{self.repo}/contents/{quote(path)}", json=body)

    def _ensure_branch(self) -> None:
        response = self.client.request(
            "GET", f"/repos/{self.repo}/git/ref/heads/{quote(self.settings.branch)}", ok=(404,)
        )
        if response.status_code == 404:
            base = self.context.sha
            if not base:
                raise GitHubError("POST", "git/refs", None, "GITHUB_SHA is needed to create the data branch")
            # A retry after a lost reply finds the branch made: 422 "Reference already exists" is success here.
            self.client.request(
                "POST",
                f"/repos/{self.repo}/git/refs",
                json={"ref": f"refs/heads/{self.settings.branch}", "sha": base},
                ok=(422,),
                idempotent=True,
            )

    def save(self, results: ResultsFile, history: PendingHistory | None = None) -> str:
        """The history first (the write a concurrent push can refuse), then the baseline, then the pointer to it;
        when a later write fails, the earlier ones are put back as they were, so both advance or neither."""
        if not self.repo:
            raise GitHubError("PUT", "contents", None, "GITHUB_REPOSITORY is not set")
        sha = results.git.sha or self.context.sha
        if not sha:
            raise GitHubError("PUT", "contents", None, "the results carry no commit sha to file them under")
        path = self._path(f"{sha}.json")
        if history is not None:  # sizes checked before anything is written: both or neither
            self._check_history_size(history.data)
        baseline = slim(results).model_dump_json() + "\n"
        if len(baseline.encode()) > MAX_CONTENTS_BYTES:
            raise GitHubError(
                "PUT",
                path,
                None,
                f"the baseline is {len(baseline.encode()):,} bytes, over the {MAX_CONTENTS_BYTES:,} GitHub's contents "
                "API takes; keep the baseline in the artifact store (baseline.store: artifact), or split the suite "
                "into configs of fewer cases",
            )
        self._ensure_branch()
        pointer = {"sha": sha, "path": path, "updated_at": datetime.now(timezone.utc).isoformat(timespec="seconds")}
        done: list[tuple[str, bytes | None, str]] = []  # (path, its old content, the blob written over it)
        try:
            if history is not None:
                blob = self._write_history(history.data, history.read)
                done.append((self._path(HISTORY_FILE), None if history.read.legacy else history.read.data, blob))
            done.append(
                (
                    path,
                    *self._put(path, baseline, f"adk-eval-gate baseline for {short_sha(sha)}"),
                )
            )
            latest = self._path("latest.json")
            done.append(
                (
                    latest,
                    *self._put(
                        latest,
                        json.dumps(pointer, indent=2) + "\n",
                        f"adk-eval-gate: latest baseline is {short_sha(sha)}",
                    ),
                )
            )
        except GitHubError as exc:
            raise NotStored(exc, self._undo(done)) from None
        return f"branch {self.settings.branch}: {path}"

    def _undo(self, done: list[tuple[str, bytes | None, str]]) -> str:
        problems = []
        for path, old, blob in reversed(done):
            try:
                self._restore(path, old, blob)
            except GitHubError as exc:
                problems.append(f"{path} could not be put back ({exc})")
        return "; ".join(problems) or "nothing was changed"


class NotStored(GitHubError):
    """A write of the pair failed: what failed, and whether what was written before it was put back."""

    def __init__(self, cause: GitHubError, undone: str) -> None:
        self.method, self.path, self.status = cause.method, cause.path, cause.status
        Exception.__init__(self, f"{cause}; {undone}")


def _blob_sha(response: requests.Response) -> str:
    sha = ((response.json() or {}).get("content") or {}).get("sha", "")
    return sha if isinstance(sha, str) else ""
