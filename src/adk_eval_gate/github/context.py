"""The standard GitHub Actions environment, read once into a typed object.

In Actions (`GITHUB_ACTIONS=true`) the event payload is the gate's only source for the pull request it judges:
a payload that is missing, unreadable or lacks a field the event needs is bad input (exit 2, naming the field),
never a quiet fall back to local mode, which would post nothing and pass. Outside Actions a payload is optional.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, StrictInt, ValidationError

from adk_eval_gate.core.errors import InputError, format_loc
from adk_eval_gate.core.files import load_json

_Sha = Annotated[str, Field(pattern=r"^[0-9a-fA-F]{7,64}$")]
_Name = Annotated[str, Field(min_length=1)]


class _Payload(BaseModel):
    model_config = ConfigDict(extra="allow")  # GitHub's payloads carry far more than the gate reads


class _Commit(_Payload):
    sha: _Sha


class _BaseCommit(_Commit):
    ref: _Name  # the base branch, whose baseline the pull request is compared with


class _PullRequest(_Payload):
    number: Annotated[StrictInt, Field(gt=0)]
    head: _Commit
    base: _BaseCommit


class _Repository(_Payload):
    default_branch: _Name


class PullRequestEvent(_Payload):
    pull_request: _PullRequest


class PushEvent(_Payload):
    ref: _Name
    after: _Sha
    repository: _Repository


class _WorkflowRun(_Payload):
    id: Annotated[StrictInt, Field(gt=0)]
    head_sha: _Sha
    event: _Name


class WorkflowRunEvent(_Payload):
    workflow_run: _WorkflowRun
    repository: _Repository


class _User(_Payload):
    login: _Name
    type: _Name  # User, Bot or Organization: a bot's comment is never a command


class _IssueComment(_Payload):
    id: Annotated[StrictInt, Field(gt=0)]
    body: str
    user: _User
    created_at: _Name  # the server's time: what a comment command is checked against


class _Issue(_Payload):
    number: Annotated[StrictInt, Field(gt=0)]
    pull_request: dict[str, Any] | None = None  # set when the issue is a pull request


class IssueCommentEvent(_Payload):
    """A comment on an issue or a pull request. It carries no head commit: the pull request is read from the API."""

    issue: _Issue
    comment: _IssueComment
    repository: _Repository


# What each event must carry for the gate to act on it; other events (workflow_dispatch, schedule) run locally.
EVENT_MODELS: dict[str, type[_Payload]] = {
    "pull_request": PullRequestEvent,
    "pull_request_target": PullRequestEvent,
    "push": PushEvent,
    "workflow_run": WorkflowRunEvent,
    "issue_comment": IssueCommentEvent,
}


def read_event(env: dict[str, str]) -> dict[str, Any]:
    """The event payload; in Actions every way it can be wrong is an InputError naming the field."""
    strict = env.get("GITHUB_ACTIONS") == "true"
    path_text = env.get("GITHUB_EVENT_PATH")
    name = env.get("GITHUB_EVENT_NAME")
    if not strict:
        if not path_text or not Path(path_text).is_file():
            return {}
        try:
            event = json.loads(Path(path_text).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        return event if isinstance(event, dict) else {}
    fix = "run the gate as a step of a GitHub Actions job, which provides the event payload"
    if not name:
        raise InputError(None, "GITHUB_EVENT_NAME", "is not set although GITHUB_ACTIONS=true", fix)
    if not path_text:
        raise InputError(None, "GITHUB_EVENT_PATH", "is not set although GITHUB_ACTIONS=true", fix)
    event = load_json(Path(path_text), f"the {name} event payload (GITHUB_EVENT_PATH)")
    if not isinstance(event, dict):
        raise InputError(path_text, None, f"the {name} event payload is not a JSON object", fix)
    # pull_request_review and friends carry a pull request too, and `ci` then judges it: the same rules apply.
    model = EVENT_MODELS.get(name) or (PullRequestEvent if "pull_request" in event else None)
    if model is not None:
        try:
            model.model_validate(event)
        except ValidationError as exc:
            first = exc.errors()[0]
            problem = "is missing" if first["type"] == "missing" else f"is invalid: {first['msg']}"
            raise InputError(
                path_text,
                format_loc(first["loc"]),
                f"{problem} in the {name} event payload",
                f"a {name} event must carry it; check the workflow's `on:` trigger",
            ) from None
    return event


@dataclass(frozen=True)
class ActionsContext:
    api_url: str = "https://api.github.com"
    repository: str | None = None
    token: str | None = field(default=None, repr=False)
    event_name: str | None = None
    event: dict[str, Any] = field(default_factory=dict, repr=False)
    sha: str | None = None
    ref: str | None = None
    base_ref: str | None = None
    run_id: str | None = None
    server_url: str = "https://github.com"
    run_attempt: str | None = None
    workspace: str | None = None  # GITHUB_WORKSPACE: the repository root inside Actions
    step_summary: str | None = None  # GITHUB_STEP_SUMMARY: the file the run's summary page shows
    output: str | None = None  # GITHUB_OUTPUT: the step's outputs for later steps

    @classmethod
    def from_env(cls, env: dict[str, str] | None = None) -> ActionsContext:
        env = dict(os.environ if env is None else env)
        event = read_event(env)
        return cls(
            api_url=env.get("GITHUB_API_URL", "https://api.github.com").rstrip("/"),
            repository=env.get("GITHUB_REPOSITORY"),
            token=env.get("INPUT_GITHUB_TOKEN") or env.get("GITHUB_TOKEN"),
            event_name=env.get("GITHUB_EVENT_NAME"),
            event=event,
            sha=env.get("GITHUB_SHA"),
            ref=env.get("GITHUB_REF"),
            base_ref=env.get("GITHUB_BASE_REF") or None,
            run_id=env.get("GITHUB_RUN_ID"),
            server_url=env.get("GITHUB_SERVER_URL", "https://github.com").rstrip("/"),
            run_attempt=env.get("GITHUB_RUN_ATTEMPT"),
            workspace=env.get("GITHUB_WORKSPACE") or None,
            step_summary=env.get("GITHUB_STEP_SUMMARY") or None,
            output=env.get("GITHUB_OUTPUT") or None,
        )

    @property
    def attempt(self) -> int:
        return int(self.run_attempt or "1")

    @property
    def run_url(self) -> str | None:
        if self.repository and self.run_id:
            return f"{self.server_url}/{self.repository}/actions/runs/{self.run_id}"
        return None

    @property
    def head_sha(self) -> str | None:
        """The commit judged: the pull request's head, else the pushed commit."""
        return ((self.pull_request or {}).get("head") or {}).get("sha") or self.sha

    @property
    def pull_request(self) -> dict[str, Any] | None:
        pr = self.event.get("pull_request")
        return pr if isinstance(pr, dict) else None

    @property
    def base_sha(self) -> str | None:
        """The base branch commit the pull request was opened or last synchronised against."""
        pr = self.pull_request
        return (pr or {}).get("base", {}).get("sha")

    @property
    def base_branch(self) -> str | None:
        pr = self.pull_request
        return (
            self.base_ref
            or (pr or {}).get("base", {}).get("ref")
            or self.event.get("repository", {}).get("default_branch")
        )

    @property
    def labels(self) -> list[str]:
        return [
            label.get("name", "") for label in (self.pull_request or {}).get("labels", []) if isinstance(label, dict)
        ]
