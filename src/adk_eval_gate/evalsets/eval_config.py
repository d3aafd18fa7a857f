"""ADK's `eval_config.json` / `test_config.json`: criteria, custom metrics and the user simulator config.

Parsed here into plain data; the criteria stage validates the criterion names and options.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator
from pydantic.alias_generators import to_camel

from adk_eval_gate.core.clip import clip
from adk_eval_gate.core.errors import InputError, did_you_mean
from adk_eval_gate.core.files import load_json
from adk_eval_gate.core.json_types import JsonObject
from adk_eval_gate.core.validation import input_error_from
from adk_eval_gate.evalsets.ignored_keys import ignored_key, once, unknown_keys

TEST_CONFIG_NAME = "test_config.json"


class CodeConfig(BaseModel):
    model_config = ConfigDict(extra="allow")
    name: str


class CustomMetricConfig(BaseModel):
    # ADK ignores unknown keys here (its CustomMetricConfig keeps pydantic's default); each one is warned about
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="ignore")
    code_config: CodeConfig
    metric_info: JsonObject | None = None
    description: str = ""


class UserSimulatorConfig(BaseModel):
    """ADK's LlmBackedUserSimulatorConfig (the audio variant keeps its own extra keys)."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="allow")
    type: str = "llm_backed"
    model: str = "gemini-2.5-flash"
    model_configuration: JsonObject | None = None
    max_allowed_invocations: int = Field(default=20, ge=-1)
    custom_instructions: str | None = None
    include_function_calls: bool = False

    @field_validator("custom_instructions")
    @classmethod
    def _template_with_placeholders(cls, value: str | None) -> str | None:
        if value is None:
            return value
        import jinja2.meta  # only for a config that has custom instructions
        import jinja2.sandbox

        try:
            used = jinja2.meta.find_undeclared_variables(jinja2.sandbox.SandboxedEnvironment().parse(value))
        except jinja2.TemplateSyntaxError as exc:
            raise ValueError(
                f"is not a valid Jinja template (line {exc.lineno}: {exc.message}); fix its syntax"
            ) from None
        missing = [name for name in ("stop_signal", "conversation_plan", "conversation_history") if name not in used]
        if missing:
            raise ValueError(
                "must use " + ", ".join(f"{{{{ {name} }}}}" for name in missing) + "; add them (ADK requires all three)"
            )
        return value


class EvalConfigFile(BaseModel):
    # ADK's EvalConfig ignores unknown top-level keys; `parse_eval_config` warns about each (or refuses, when they
    # leave no criteria at all)
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="ignore")
    criteria: JsonObject = Field(default_factory=dict)
    custom_metrics: dict[str, CustomMetricConfig] | None = None
    user_simulator_config: UserSimulatorConfig | None = None
    live_model_config: JsonObject | None = None


class _StrictCustomMetricConfig(CustomMetricConfig):
    model_config = ConfigDict(extra="forbid")


class _StrictEvalConfigFile(EvalConfigFile):
    model_config = ConfigDict(extra="forbid")
    custom_metrics: dict[str, _StrictCustomMetricConfig] | None = None  # type: ignore[assignment]  # narrower on purpose


@dataclass(frozen=True)
class EvalConfigData:
    """Criteria as written (name → float or object), plus where they came from."""

    criteria: JsonObject
    source: str  # a file path, "inline" or "default"
    custom_metric_names: tuple[str, ...] = ()
    custom_metric_paths: dict[str, str] = field(default_factory=dict)  # name -> code_config.name
    user_simulator_config: JsonObject | None = None
    warnings: tuple[InputError, ...] = ()  # keys ADK ignores, one line each


_TOP_LEVEL = set(EvalConfigFile.model_fields) | {to_camel(name) for name in EvalConfigFile.model_fields}


def _both_spellings(names: Any) -> set[str]:
    return set(names) | {to_camel(name) for name in names}


_METRIC_KEYS = _both_spellings(CustomMetricConfig.model_fields)


def _meant(key: str, value: Any, known_criteria: set[str]) -> str | None:
    """The field an ignored key was meant to be: `criteria` when it holds criteria (a mapping of criterion names,
    or a list of ADK's `{metric_name, threshold}` EvalMetrics), else the closest spelling."""
    names = set(value) if isinstance(value, dict) else set()
    if isinstance(value, list):
        names = {item.get("metric_name", item.get("metricName")) for item in value if isinstance(item, dict)}
    if names & known_criteria:
        return "criteria"
    return did_you_mean(key, sorted(_TOP_LEVEL))


def _criteria_from(value: Any) -> str:
    """`{"criteria": {...}}` written from an ignored key's value, to copy into the fix."""
    if isinstance(value, list):
        value = {
            str(item.get("metric_name", item.get("metricName"))): item.get("threshold", 1.0)
            for item in value
            if isinstance(item, dict) and isinstance(item.get("metric_name", item.get("metricName")), str)
        }
    return clip(json.dumps({"criteria": value}, default=str), 120)


def parse_eval_config(data: Any, path: Path, known_criteria: set[str]) -> EvalConfigData:
    if not isinstance(data, dict):
        raise InputError(
            path,
            None,
            f"expected a JSON object, got {type(data).__name__}",
            'write {"criteria": {"tool_trajectory_avg_score": 1.0}}',
        )
    lines = once(path)
    without_criteria = not data.get("criteria")
    warnings: list[InputError] = []
    for key in unknown_keys(data, _TOP_LEVEL):
        meant = _meant(key, data[key], known_criteria)
        if key in known_criteria or (without_criteria and meant == "criteria"):
            # ADK reads such a file as `criteria={}` and checks nothing: every case passes unscored. A gate that
            # gates nothing is no gate, so this one is refused, on the key that was meant as criteria.
            stray = {name: value for name, value in data.items() if name in known_criteria}
            shown = _criteria_from(stray if key in known_criteria else data[key])
            raise InputError(
                path,
                key,
                "is ignored by ADK, which reads criteria only under a top-level `criteria` key, "
                "so this config would check nothing (ADK passes every case unscored)",
                ("" if key in known_criteria else "did you mean `criteria`? ") + f"write {shown}",
                line=lines((key,)),
            )
        hint = f"did you mean `{meant}`?" if meant else "use criteria, custom_metrics or user_simulator_config"
        warnings.append(
            InputError(path, key, "is not an eval_config field, so ADK ignores it", hint, line=lines((key,)))
        )
    metrics = data.get("custom_metrics", data.get("customMetrics"))
    for name, entry in metrics.items() if isinstance(metrics, dict) else ():
        for key in unknown_keys(entry, _METRIC_KEYS):
            warnings.append(
                ignored_key(
                    path,
                    ("custom_metrics", name, key),
                    _METRIC_KEYS,
                    "is not a custom metric field, so ADK ignores it",
                    lines,
                )
            )
    try:
        parsed = EvalConfigFile.model_validate(data)
    except ValidationError:
        # refused as ADK refuses it, but named through the strict twin: a misspelt required key reads as the
        # misspelling (with its did-you-mean), not as the field that is missing
        try:
            _StrictEvalConfigFile.model_validate(data)
        except ValidationError as exc:
            raise input_error_from(exc, path, model=_StrictEvalConfigFile) from None
        raise  # not reached: the strict twin refuses whatever the model refuses
    return EvalConfigData(
        criteria=dict(parsed.criteria),
        source=str(path),
        custom_metric_names=tuple(parsed.custom_metrics or ()),
        custom_metric_paths={name: c.code_config.name for name, c in (parsed.custom_metrics or {}).items()},
        user_simulator_config=parsed.user_simulator_config.model_dump() if parsed.user_simulator_config else None,
        warnings=tuple(warnings),
    )


def load_eval_config(path: Path, known_criteria: set[str]) -> EvalConfigData:
    return parse_eval_config(load_json(path, "eval config"), path, known_criteria)


def sibling_test_config(eval_set_path: Path) -> Path | None:
    """Both `adk eval` (2.7+) and AgentEvaluator read test_config.json beside the eval file."""
    candidate = eval_set_path.parent / TEST_CONFIG_NAME
    if not candidate.exists() and not candidate.is_symlink():
        return None
    return candidate  # a directory, pipe or dangling link of that name is refused by the reader, not skipped
