"""`agents[].target`: how an agent's actual invocations are obtained, one settings class per target kind."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field, field_validator

from adk_eval_gate.config.strict_section import Strict as _Strict
from adk_eval_gate.core.held_tokens import is_github_token_name
from adk_eval_gate.core.redaction import check_pass_env


class ReplayTargetSettings(_Strict):
    """Score actual invocations produced elsewhere: an evalset-shaped file of actuals, ADK eval history
    (`*.evalset_result.json`, or a directory of them), or an adk-eval-gate results file."""

    kind: Literal["replay"]
    actuals: list[str] = Field(min_length=1)

    @field_validator("actuals", mode="before")
    @classmethod
    def _one_or_many(cls, value: object) -> Any:
        return [value] if isinstance(value, str) else value


class AdkTargetSettings(_Strict):
    """Run an ADK agent in process: an agent folder (as `adk eval` takes it) or `module:attribute`."""

    kind: Literal["adk"]
    agent: str = Field(min_length=1)
    # Off unless asked: a run writes nothing outside its output folder (the agent folder may be the user's
    # checkout, or a read-only one).
    eval_history: bool = Field(
        default=False,
        description="also write ADK eval history into the agent folder "
        "(.adk/eval_history), as `adk eval` does, so `adk web` lists these runs (default false)",
    )
    model: Literal["agent", "expected"] = Field(
        default="agent",
        description="agent: the agent's own model; expected: played from the eval set's expected turns, offline "
        "(`--offline` sets it): tests tools, wiring and scoring, not the model; never stored or compared as a "
        "baseline (docs/try-it-offline.md)",
    )


class HttpTargetSettings(_Strict):
    """An agent served by `adk api_server` (or Cloud Run): one session per case, one `/run` call per turn."""

    kind: Literal["http"]
    url: Annotated[str, Field(pattern=r"^https?://[^\s/]+")]
    app_name: str = Field(min_length=1)
    # header name -> name of the environment variable holding its value (tokens never live in the config)
    headers_from_env: dict[str, str] = Field(
        default_factory=dict,
        description="header name -> the environment variable holding its value; never one of GitHub's tokens",
    )
    connect_timeout: float = Field(default=10.0, gt=0)
    read_timeout: float = Field(default=600.0, gt=0)

    @field_validator("headers_from_env")
    @classmethod
    def _no_token(cls, headers: dict[str, str]) -> dict[str, str]:
        """The config (the pull request's own copy) chooses `url`: a token named here would be sent to its server."""
        for header, variable in headers.items():
            if is_github_token_name(variable.strip()):
                raise ValueError(
                    f"{header}: {variable!r} is one of GitHub's tokens, which is never sent to an agent's server "
                    "(the pull request's copy of this file chooses the url); give the server a credential of its "
                    "own, in a variable of another name"
                )
        return headers


class CommandTargetSettings(_Strict):
    """Any executable speaking the JSON protocol in the README: one request per case on stdin, events,
    invocations or plain turns on stdout."""

    kind: Literal["command"]
    command: list[str] = Field(min_length=1)
    cwd: str | None = None
    env: dict[str, str] = Field(default_factory=dict)
    pass_env: list[str] = Field(
        default_factory=list,
        description="no longer accepted: no config hands GitHub's tokens to the command (docs/trust.md); every "
        "other variable reaches it anyway",
    )

    @field_validator("pass_env")
    @classmethod
    def _pass_env(cls, names: list[str]) -> list[str]:
        return check_pass_env(names)


TargetSettings = Annotated[
    ReplayTargetSettings | AdkTargetSettings | HttpTargetSettings | CommandTargetSettings,
    Field(discriminator="kind"),
]
