"""Per-criterion options, as ADK's `eval_metrics.py` criterion classes define them.

Unlike ADK (whose criteria accept and silently drop unknown keys), unknown keys are errors in the gate's own config:
a misspelt `match_type` must not quietly fall back to EXACT in a merge gate. In a file ADK reads (eval_config.json,
test_config.json) they are warnings instead, and dropped (`registry.resolve_criteria(ignored=...)`), so the file
loads as ADK loads it.
"""

from __future__ import annotations

import math
from enum import Enum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator
from pydantic.alias_generators import to_camel

from adk_eval_gate.core.json_types import JsonObject
from adk_eval_gate.core.numbers import in_range
from adk_eval_gate.criteria.engine.criterion import CriterionOptions
from adk_eval_gate.evalsets.adk_eval_schema import Rubric


class _Options(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="forbid")


def check_threshold(value: object) -> float:
    # ADK also takes numeric strings; in a gate a quoted or boolean threshold is almost certainly a mistake.
    if isinstance(value, bool):
        raise ValueError(f"{value!r} is not a threshold; use a number between 0 and 1")
    if isinstance(value, str):
        try:
            float(value)
        except ValueError:  # "high", "strict": a word where a number belongs
            raise ValueError(f"{value!r} is a word, not a number; use a number between 0 and 1, e.g. 0.8") from None
        raise ValueError(f"{value!r} is quoted text, not a number; write the number without quotes, between 0 and 1")
    if not isinstance(value, (int, float)):
        raise ValueError(f"{value!r} is not a number; use a number between 0 and 1")
    number = float(value)
    if math.isnan(number) or not 0.0 <= number <= 1.0:
        raise ValueError(f"threshold {number!r} is outside [0, 1]; use a number between 0 and 1")
    return number


class ThresholdOptions(_Options, CriterionOptions):
    threshold: float
    include_intermediate_responses_in_final: bool = False

    @field_validator("threshold", mode="before")
    @classmethod
    def _threshold(cls, value: object) -> float:
        return check_threshold(value)


class MatchType(str, Enum):
    EXACT = "EXACT"
    IN_ORDER = "IN_ORDER"
    ANY_ORDER = "ANY_ORDER"


_MATCH_TYPE_BY_NUMBER = {0: MatchType.EXACT, 1: MatchType.IN_ORDER, 2: MatchType.ANY_ORDER}


class ToolTrajectoryOptions(ThresholdOptions):
    match_type: MatchType = MatchType.EXACT
    ignore_args: bool = False

    @field_validator("match_type", mode="before")
    @classmethod
    def _match_type(cls, value: object) -> Any:
        # ADK's enum values are 0/1/2 and strings are matched case-insensitively with '-' or ' ' for '_'.
        if isinstance(value, int) and not isinstance(value, bool) and value in _MATCH_TYPE_BY_NUMBER:
            return _MATCH_TYPE_BY_NUMBER[value]
        if isinstance(value, str):
            normalized = value.strip().upper().replace("-", "_").replace(" ", "_")
            if normalized in MatchType.__members__:
                return MatchType[normalized]
        raise ValueError(f"{value!r} is not a match type; use one of EXACT, IN_ORDER, ANY_ORDER")


class TrajectoryOverlapOptions(ThresholdOptions):
    ignore_args: bool = False


class SingleToolUseOptions(ThresholdOptions):
    tool_name: str = Field(min_length=1, description="the tool that must be called in every turn")


class JudgeModelOptions(_Options):
    judge_model: str = "gemini-2.5-flash"
    judge_model_config: JsonObject | None = None
    num_samples: int = Field(default=5, ge=1, le=100)
    parallelism_limit: int = Field(default=1, ge=1)


class LlmJudgeOptions(ThresholdOptions):
    judge_model_options: JudgeModelOptions = Field(default_factory=JudgeModelOptions)


class RubricsOptions(LlmJudgeOptions):
    rubrics: list[Rubric] = Field(default_factory=list)


class HallucinationsOptions(LlmJudgeOptions):
    evaluate_intermediate_nl_responses: bool = False


class UserSimulatorQualityOptions(LlmJudgeOptions):
    stop_signal: str = "</finished>"


class AgentsCliOptions(CriterionOptions):
    """`threshold` is 0 and `has_threshold` false for a metric the config gives none (results need a number)."""

    model_config = ConfigDict(extra="forbid")
    threshold: float = 0.0
    has_threshold: bool = False

    @field_validator("threshold", mode="before")
    @classmethod
    def _finite(cls, value: object) -> float:
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not in_range(value):
            raise ValueError(f"{value!r} is not a threshold; use a finite number on the metric's own scale")
        return float(value)
