"""How a run is published, settled once from the command line over the config's `comment:` section."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from adk_eval_gate.config.loader import Workflow
from adk_eval_gate.core.paths import relative_to_root
from adk_eval_gate.handshake.ours import CommentPolicy


@dataclass
class PublishOptions:
    config: str
    output_dir: str = "adk-eval-gate-out"
    post_comment: bool = True
    labels: list[str] = field(default_factory=list)
    quiet: bool = False
    comment_key: str | None = None
    shard: tuple[int, int] | None = None  # (i, n), 1-based
    # the command line's word over the config's `comment:` section
    comment_mode: str | None = None
    comment_when: str | None = None
    comment_author: str | None = None
    cases: list[str] = field(default_factory=list)  # --cases selectors; a partial run is never a baseline


def comment_key(explicit: str | None, workflow: Workflow, root: Path, *, configured: str | None) -> str:
    """The key that keeps one comment per config: two `eval-gate.yml` in different folders get two comments.
    `configured`: `comment.key` from a config the caller trusts (handshake/trusted.py), since the key picks which of
    our comments, and so whose acceptances, a run reads."""
    return explicit or configured or relative_to_root(workflow.path, root) or workflow.path.name


def comment_policy(workflow: Workflow, options: PublishOptions | None = None, *, author: str | None) -> CommentPolicy:
    """`author` decides which comment is ours, so the caller names its trusted source (handshake/trusted.py): never
    the `comment.author` of a config the pull request can change."""
    section = workflow.settings.comment
    if options is None:
        return CommentPolicy(mode=section.mode, when=section.when, author=author)
    return CommentPolicy(
        mode=options.comment_mode or section.mode, when=options.comment_when or section.when, author=author
    )
