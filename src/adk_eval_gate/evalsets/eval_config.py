"""ADK's `eval_config.json` / `test_config.json`: criteria, custom metrics and the user simulator config.

Parsed here into plain data; the criteria stage validates the criterion names and options.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator
from pydantic.alias_generators import to_camel

from adk_eval_gate.core.errors import InputError, did_you_mean
from adk_eval_gate.core.files import load_json
from adk_eval_gate.core.validation import input_error_from

TEST_CONFIG_NAME = "test_config.json"


class CodeConfig(BaseModel):
    model_config = ConfigDict(extra="allow")
    name: str


class CustomMetricConfig(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="forbid")
    code_config: CodeConfig
    metric_info: dict[str, Any] | None = None
    description: str = ""


class UserSimulatorConfig(BaseModel):
    """ADK's LlmBackedUserSimulatorConfig (the audio variant keeps its own extra keys)."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="allow")
    type: str = "llm_backed"
    model: str = "gemini-2.5-flash"
    model_configuration: dict[str, Any] | None = None
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
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="forbid")
    criteria: dict[str, Any] = Field(default_factory=dict)
    custom_metrics: dict[str, CustomMetricConfig] | None = None
    user_simulator_config: UserSimulatorConfig | None = None
    live_model_config: dict[str, Any] | None = None


@dataclass(frozen=True)
class EvalConfigData:
    """Criteria as written (name → float or object), plus where they came from."""

    criteria: dict[str, Any]
    source: str  # a file path, "inline" or "default"
    custom_metric_names: tuple[str, ...] = ()
    custom_metric_paths: dict[str, str] = field(default_factory=dict)  # name -> code_config.name
    user_simulator_config: dict[str, Any] | None = None


_TOP_LEVEL = set(EvalConfigFile.model_fields) | {to_camel(name) for name in EvalConfigFile.model_fields}


def parse_eval_config(data: Any, path: Path, known_criteria: set[str]) -> EvalConfigData:
    if not isinstance(data, dict):
        raise InputError(
            path,
            None,
            f"expected a JSON object, got {type(data).__name__}",
            'write {"criteria": {"tool_trajectory_avg_score": 1.0}}',
        )
    for key in data:
        if key in _TOP_LEVEL:
            continue
        if key in known_criteria:
            # ADK reads such a file as `criteria={}` and fails every case; the intent is unmistakable.
            raise InputError(
                path,
                key,
                "criteria must sit under a top-level `criteria` key",
                f'write {{"criteria": {{"{key}": ...}}}}',
            )
        guess = did_you_mean(key, sorted(_TOP_LEVEL))
        raise InputError(
            path,
            key,
            "is not an eval_config field",
            f"did you mean `{guess}`?" if guess else "use criteria, custom_metrics or user_simulator_config",
        )
    try:
        parsed = EvalConfigFile.model_validate(data)
    except ValidationError as exc:
        raise input_error_from(exc, path, model=EvalConfigFile) from None
    return EvalConfigData(
        criteria=dict(parsed.criteria),
        source=str(path),
        custom_metric_names=tuple(parsed.custom_metrics or ()),
        custom_metric_paths={name: c.code_config.name for name, c in (parsed.custom_metrics or {}).items()},
        user_simulator_config=parsed.user_simulator_config.model_dump() if parsed.user_simulator_config else None,
    )


def load_eval_config(path: Path, known_criteria: set[str]) -> EvalConfigData:
    return parse_eval_config(load_json(path, "eval config"), path, known_criteria)


def sibling_test_config(eval_set_path: Path) -> Path | None:
    """Both `adk eval` (2.7+) and AgentEvaluator read test_config.json beside the eval file."""
    candidate = eval_set_path.parent / TEST_CONFIG_NAME
    if not candidate.exists() and not candidate.is_symlink():
        return None
    return candidate  # a directory, pipe or dangling link of that name is refused by the reader, not skipped
