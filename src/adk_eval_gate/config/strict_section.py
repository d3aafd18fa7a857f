"""The strict base every config section shares."""

from __future__ import annotations

from typing import Annotated

from pydantic import AfterValidator, BaseModel, ConfigDict, Field


class Strict(BaseModel):
    # strict: "0.8" is not a number and `true` is not a count; YAML gives real numbers, so a string is a mistake.
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)


def comment_key_problem(key: str) -> str | None:
    """What is wrong with a sticky comment's key, which lives in a hidden HTML comment at the top of ours."""
    if not 1 <= len(key) <= 200:
        return "must be 1 to 200 characters"
    if "-->" in key or any(ord(c) < 32 or ord(c) == 127 for c in key):
        return "must not hold `-->`, a line break or another control character (it is kept in a hidden HTML comment)"
    return None


def _check_comment_key(key: str) -> str:
    if (problem := comment_key_problem(key)) is not None:
        raise ValueError(problem)
    return key


CommentKey = Annotated[str, Field(min_length=1, max_length=200), AfterValidator(_check_comment_key)]
