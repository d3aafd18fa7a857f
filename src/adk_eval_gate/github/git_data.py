"""One commit pushed to a branch through GitHub's Git Data API (blobs, a tree, a commit, the ref), no checkout needed.

The ref moves only as a fast-forward from the commit the files were made from (`force: false`): if the branch moved
meanwhile, GitHub answers 422 and nothing changes — a push never overwrites a commit nobody saw.
Blob contents travel base64-encoded: the file's exact bytes (a byte-order mark, `\\r\\n`), and never a string the
client's secret masking could rewrite on the way.
"""

from __future__ import annotations

import base64
from collections.abc import Sequence
from dataclasses import dataclass
from urllib.parse import quote

from adk_eval_gate.core.clip import short_sha
from adk_eval_gate.github.client import GitHubClient, GitHubError

FILE_MODE = "100644"


@dataclass(frozen=True)
class FileUpdate:
    path: str  # relative to the repository's root, with `/`
    content: bytes


class PushRefused(Exception):
    """The branch moved since the commit we built on (GitHub's 422 on a non-fast-forward), or the push failed."""


def push_commit(
    client: GitHubClient, repository: str, branch: str, parent: str, files: Sequence[FileUpdate], message: str
) -> str:
    """The new commit's sha, now the head of `branch`; PushRefused when the branch is no longer at `parent`."""
    base = f"/repos/{repository}/git"
    parent_commit = client.get_json(f"{base}/commits/{parent}")
    entries = []
    for update in files:
        blob = client.request(
            "POST",
            f"{base}/blobs",
            json={"content": base64.b64encode(update.content).decode(), "encoding": "base64"},
            idempotent=True,  # content-addressed: posting it twice makes the same blob
        ).json()
        entries.append({"path": update.path, "mode": FILE_MODE, "type": "blob", "sha": blob["sha"]})
    tree = client.request(
        "POST", f"{base}/trees", json={"base_tree": parent_commit["tree"]["sha"], "tree": entries}, idempotent=True
    ).json()
    commit = client.request(
        "POST", f"{base}/commits", json={"message": message, "tree": tree["sha"], "parents": [parent]}, idempotent=True
    ).json()
    try:
        client.request(
            "PATCH", f"{base}/refs/heads/{quote(branch, safe='/')}", json={"sha": commit["sha"], "force": False}
        )
    except GitHubError as exc:
        if exc.status == 422:
            raise PushRefused(
                f"the branch {branch} moved since commit {short_sha(parent)} (not a fast-forward)"
            ) from None
        raise PushRefused(f"the push to {branch} failed: {exc}") from None
    return str(commit["sha"])
