"""The standard GitHub Actions environment, read once into a typed object.

The event payload is the gate's only source for the pull request it judges. In Actions (`GITHUB_ACTIONS=true`) a
payload that is missing, unreadable or lacks a field the event needs is bad input (exit 2, naming the field),
never a quiet fall back to local mode, which would post nothing and pass. Any other CI that sets
GITHUB_EVENT_PATH has asked for the same: the payload it names is read and checked by the same rules; without
one the run is local. The other variables are checked by `variables.check_variables` in every mode.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

from pydantic import BaseModel, ConfigDict, Field, StrictInt, ValidationError

from adk_eval_gate.core.clip import clip
from adk_eval_gate.core.errors import InputError
from adk_eval_gate.core.files import load_json
from adk_eval_gate.core.held_tokens import held
from adk_eval_gate.core.json_types import JsonObject
from adk_eval_gate.core.validation import input_error_from
from adk_eval_gate.github.session import GitHubSession
from adk_eval_gate.github.variables import check_variables

if TYPE_CHECKING:
    from adk_eval_gate.github.client import GitHubClient

_Sha = Annotated[str, Field(pattern=r"^[0-9a-fA-F]{7,64}$")]
_Name = Annotated[str, Field(min_length=1)]


class _Payload(BaseModel):
    model_config = ConfigDict(extra="allow")  # GitHub's payloads carry far more than the gate reads


class _Commit(_Payload):
    sha: _Sha


class _BaseCommit(_Commit):
    ref: _Name  # the base branch, whose baseline the pull request is compared with


class _Label(_Payload):
    name: str


class _PullRequest(_Payload):
    number: Annotated[StrictInt, Field(gt=0)]
    head: _Commit
    base: _BaseCommit
    labels: list[_Label] = []


class _Repository(_Payload):
    default_branch: _Name


class _AnyRepository(_Payload):
    default_branch: _Name | None = None


class AnyEvent(_Payload):
    """What the gate reads from any payload, whatever the event: wrong types here would surface mid-run."""

    repository: _AnyRepository | None = None


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
    pull_request: JsonObject | None = None  # set when the issue is a pull request


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


def read_event(env: dict[str, str]) -> JsonObject:
    """The event payload ({} when there is none outside Actions); every way it can be wrong is an InputError."""
    strict = env.get("GITHUB_ACTIONS") == "true"
    path_text = env.get("GITHUB_EVENT_PATH") or ""
    name = env.get("GITHUB_EVENT_NAME") or ""
    fix = "run the gate as a step of a GitHub Actions job, which provides the event payload"
    if strict and not name:
        raise InputError(None, "GITHUB_EVENT_NAME", "is not set although GITHUB_ACTIONS=true", fix)
    if strict and not path_text:
        raise InputError(None, "GITHUB_EVENT_PATH", "is not set although GITHUB_ACTIONS=true", fix)
    if not path_text:
        return {}
    what = f"the {name or 'GitHub'} event payload (GITHUB_EVENT_PATH)"
    if not os.path.lexists(path_text):  # load_json's hint about the config's folder would mislead here
        raise InputError(
            None,
            "GITHUB_EVENT_PATH",
            f"{clip(path_text, 200)!r}: no such file",
            fix if strict else "point it at GitHub's event JSON, or unset it to run locally",
        )
    event = load_json(Path(path_text), what)
    if not isinstance(event, dict):
        raise InputError(
            path_text,
            None,
            f"{what} is not a JSON object",
            fix if strict else "point GITHUB_EVENT_PATH at GitHub's event JSON, or unset it",
        )
    # pull_request_review and friends carry a pull request too, and `ci` then judges it: the same rules apply.
    model = EVENT_MODELS.get(name) or (PullRequestEvent if "pull_request" in event else AnyEvent)
    for check in (model, AnyEvent):
        try:
            check.model_validate(event)
        except ValidationError as exc:
            error = input_error_from(exc, path_text, model=check)
            raise InputError(
                path_text,
                error.field,
                f"{error.problem} in {what}",
                f"a {name} event must carry it; check the workflow's `on:` trigger"
                if strict
                else "give GitHub's payload for the event unchanged, or unset GITHUB_EVENT_PATH to run locally",
            ) from None
    return event


@dataclass(frozen=True)
class ActionsContext:
    api_url: str = "https://api.github.com"
    repository: str | None = None
    token: str | None = field(default=None, repr=False)
    event_name: str | None = None
    event: JsonObject = field(default_factory=dict, repr=False)
    sha: str | None = None
    ref: str | None = None
    base_ref: str | None = None
    run_id: str | None = None
    server_url: str = "https://github.com"
    run_attempt: str | None = None
    workspace: str | None = None  # GITHUB_WORKSPACE: the repository root inside Actions
    step_summary: str | None = None  # GITHUB_STEP_SUMMARY: the file the run's summary page shows
    output: str | None = None  # GITHUB_OUTPUT: the step's outputs for later steps
    # The pull request's merge-base as git named it before any of the pull request's code ran (None: not asked yet):
    # `setup:` can rewrite the checkout's .git (a remote ref moved back, a replace ref), and the merge-base picks
    # the baseline, so it is read once, early, and never again (baseline/stores/stored_baseline.py `merge_base_found`).
    merge_base: tuple[str, ...] | None = None
    # The run's GitHub session (its no-answer budget, the names resolved): created with the context by the command,
    # carried by every copy of it (dataclasses.replace), so each client of the run shares it and no module keeps it.
    github: GitHubSession = field(default_factory=GitHubSession, repr=False, compare=False)

    @classmethod
    def from_env(cls, env: dict[str, str] | None = None) -> ActionsContext:
        # GitHub's tokens are held out of the environment (core/held_tokens.py), beside which they are read.
        env = {**os.environ, **held()} if env is None else dict(env)
        checked = check_variables(env)  # before the payload: a bad variable is named even when both are wrong
        event = read_event(env)
        return cls(
            api_url=checked.get("GITHUB_API_URL", "https://api.github.com"),
            repository=checked.get("GITHUB_REPOSITORY"),
            token=checked.get("INPUT_GITHUB_TOKEN") or checked.get("GITHUB_TOKEN"),
            event_name=checked.get("GITHUB_EVENT_NAME"),
            event=event,
            sha=checked.get("GITHUB_SHA"),
            ref=checked.get("GITHUB_REF"),
            base_ref=env.get("GITHUB_BASE_REF") or None,
            run_id=checked.get("GITHUB_RUN_ID"),
            server_url=checked.get("GITHUB_SERVER_URL", "https://github.com"),
            run_attempt=checked.get("GITHUB_RUN_ATTEMPT"),
            workspace=env.get("GITHUB_WORKSPACE") or None,
            step_summary=env.get("GITHUB_STEP_SUMMARY") or None,
            output=env.get("GITHUB_OUTPUT") or None,
        )

    def client(self) -> GitHubClient:
        """A client of this run's API with its token, sharing the run's session."""
        from adk_eval_gate.github.client import GitHubClient  # requests, only for a run that talks to GitHub

        return GitHubClient(self.api_url, self.token, session=self.github)

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
    def pull_request(self) -> JsonObject | None:
        pr = self.event.get("pull_request")
        return pr if isinstance(pr, dict) else None

    @property
    def base_sha(self) -> str | None:
        """The base branch commit the pull request was opened or last synchronised against."""
        sha = ((self.pull_request or {}).get("base") or {}).get("sha")
        return sha if isinstance(sha, str) else None

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
