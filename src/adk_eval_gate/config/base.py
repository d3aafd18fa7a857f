"""The strict base every config section shares."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class Strict(BaseModel):
    # strict: "0.8" is not a number and `true` is not a count; YAML gives real numbers, so a string is a mistake.
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)
