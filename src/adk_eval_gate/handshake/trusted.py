"""The settings a security decision reads, from where the pull request cannot write: the Action's inputs and the
base branch, never the checkout.

A pull request's checkout is its author's: its `eval-gate.yml` says whatever they like. These settings decide
trust, so none is read from it:

* `comment.author`, the login our comments are posted as: which comment is ours, so whose hidden data (and the
  acceptances in it) counts. A pull request that named its author's login would have its author's comments read
  as ours, forged acceptances included.
* `comment.key`, which of our comments a run reads and writes: another config's key would borrow that config's
  acceptances (and overwrite its report).
* `gate.override_label`, the label that passes a failing gate: a pull request could name a label that automation
  adds, or one already on it.
* `report.check_name`, the name of the check run and of the commit status `/eval` sets, which branch protection
  requires: a pull request could name another required check and pass it.

They come from the command line (the Action's inputs: the workflow file of an `issue_comment` or `workflow_run`
run is the default branch's), else from the base branch's copy of the config, read with the contents API at the
pull request's base sha (GitHub's, from the event or the API). A base branch without the config (404: the pull
request adds it) has the built-in defaults, which no pull request chose. A copy that cannot be read, parsed or
validated fails closed: no label overrides, and the author is the inputs' or GitHub's own answer (`GET /user`,
else the workflow's bot), with a line saying why.
"""

from __future__ import annotations

import base64
import binascii
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

from pydantic import ValidationError

from adk_eval_gate.config.loader import Workflow
from adk_eval_gate.config.workflow_settings import CommentSection, GateSettings, ReportSection
from adk_eval_gate.core.clip import first_line, short_sha
from adk_eval_gate.core.errors import InputError
from adk_eval_gate.core.paths import relative_to_root
from adk_eval_gate.core.yaml_files import parse_yaml
from adk_eval_gate.github.client import GitHubError
from adk_eval_gate.github.context import ActionsContext

DEFAULT_LABEL = GateSettings().override_label
DEFAULT_CHECK = ReportSection().check_name


@dataclass(frozen=True)
class TrustedSettings:
    comment_author: str | None  # the login our comments are posted as; None: GitHub says (`GET /user`, else the bot)
    override_label: str | None  # the label that passes a failing gate; None: no label does
    warning: str | None = None  # why the base branch's settings could not be used (then no label overrides)
    comment_key: str | None = None  # the base branch's `comment.key`; None: the config's path in the repository
    check_name: str = DEFAULT_CHECK  # the check run's and commit status's name, which branch protection requires


def trusted_settings(
    context: ActionsContext, workflow: Workflow, author_input: str | None, root: Path
) -> TrustedSettings:
    """`author_input`: `--comment-author` (the Action's `comment-author` input), which comes first."""
    relative = relative_to_root(workflow.path, root)
    if not (context.token and context.repository):
        # nothing is posted and no label is confirmed without a token: the base branch has nothing to decide
        return TrustedSettings(author_input, None)
    if not context.base_sha:
        return _closed(author_input, "the event names no base commit to read the config at")
    if relative is None:
        return _closed(author_input, f"the config {workflow.path.name} is outside the repository")
    where = f"the base branch's {relative} (at {short_sha(context.base_sha)})"
    client = context.client()
    path = f"/repos/{context.repository}/contents/{quote(relative, safe='/')}"
    try:
        response = client.request("GET", path, params={"ref": context.base_sha}, ok=(404,))
    except GitHubError as exc:
        return _closed(author_input, f"{where} could not be read ({exc})")
    if response.status_code == 404:  # the pull request adds the config: nothing on the base branch chose otherwise
        return TrustedSettings(author_input, DEFAULT_LABEL)
    try:
        comment, gate, report = _sections(response.json(), relative)
    except (InputError, ValidationError, ValueError) as exc:
        first = first_line(str(exc), 200)
        return _closed(author_input, f"{where} is not a config this version can read ({first})")
    return TrustedSettings(author_input or comment.author, gate.override_label, None, comment.key, report.check_name)


def _sections(payload: object, relative: str) -> tuple[CommentSection, GateSettings, ReportSection]:
    """The `comment:`, `gate:` and `report:` sections of the contents API's answer (a file, base64, under 1 MB)."""
    if not isinstance(payload, dict) or payload.get("type") != "file" or payload.get("encoding") != "base64":
        raise ValueError("not a file whose content GitHub returns")
    try:
        text = base64.b64decode(str(payload.get("content") or ""), validate=False).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError):
        raise ValueError("its content is not UTF-8 text") from None
    data, _ = parse_yaml(text, Path(relative), "the base branch's config")
    if not isinstance(data, dict):
        raise ValueError("its top level is not a mapping")
    return (
        CommentSection.model_validate(data.get("comment") or {}),
        GateSettings.model_validate(data.get("gate") or {}),
        ReportSection.model_validate(data.get("report") or {}),
    )


def _closed(author_input: str | None, why: str) -> TrustedSettings:
    return TrustedSettings(
        author_input,
        None,
        f"{why}: no label overrides the gate, and our comment is the one GitHub's own answer names as the token's "
        "(the pull request's own config is never asked)",
    )
