"""The workflow config (one YAML file), validated once into typed settings.

Unknown keys are errors at every level: a typo must fail loudly, never pass a gate silently.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

NAME_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ReplayTarget(_Strict):
    """Score actual invocations produced elsewhere: an evalset-shaped file of actuals, ADK eval history
    (`*.evalset_result.json`, or a directory of them), or an adk-eval-gate results file."""

    kind: Literal["replay"]
    actuals: list[str] = Field(min_length=1)

    @field_validator("actuals", mode="before")
    @classmethod
    def _one_or_many(cls, value: Any) -> Any:
        return [value] if isinstance(value, str) else value


TargetSettings = Annotated[ReplayTarget, Field(discriminator="kind")]


class AgentSettings(_Strict):
    name: Annotated[str, Field(pattern=NAME_PATTERN)]
    target: TargetSettings
    evalsets: list[str] = Field(min_length=1)
    criteria: dict[str, Any] | None = None
    eval_config: str | None = None
    num_runs: int = Field(default=1, ge=1, le=100)

    @field_validator("evalsets", mode="before")
    @classmethod
    def _one_or_many(cls, value: Any) -> Any:
        return [value] if isinstance(value, str) else value

    @model_validator(mode="after")
    def _one_criteria_source(self) -> AgentSettings:
        if self.criteria is not None and self.eval_config is not None:
            raise ValueError("`criteria` and `eval_config` both given; keep one (inline criteria or ADK's eval_config.json)")
        return self


class Settings(_Strict):
    version: Literal[1] = 1
    agents: list[AgentSettings] = Field(min_length=1)

    @model_validator(mode="after")
    def _unique_agent_names(self) -> Settings:
        seen: set[str] = set()
        for agent in self.agents:
            if agent.name in seen:
                raise ValueError(f"two agents are named {agent.name!r}; give each agent a unique name")
            seen.add(agent.name)
        return self


def is_glob(pattern: str) -> bool:
    return bool(re.search(r"[*?\[]", pattern))
