"""agents-cli's `tests/eval/eval_config.yaml` (JSON accepted too): `metrics_to_run` and `custom_metrics`.

Read with agents-cli 1.11's rules (`eval grade`), into plain data for the criteria stage:

* `custom_function` (source defining `evaluate(instance)`) or `custom_function_file` (a path relative to this
  file's folder, read and treated as inline) — not both; `execution: local` (default) or `remote`.
* `prompt_template` (+ `judge_model`, `judge_model_sampling_count` 1-32, the rest of the SDK's LLMMetric keys).
* An entry without a body parameterises the predefined metric it names; `rubric_group_name` is refused.

Keys agents-cli ignores (unknown top-level keys, unknown keys of a metric, an entry without a name, an earlier
entry of the same name) are warnings with a did-you-mean, never errors; a metric that an ignored key leaves without
a body is refused on that key, as agents-cli refuses the metric. `custom_function_name` is named for what it does
not do: agents-cli always calls `evaluate(instance)`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from adk_eval_gate.core.errors import InputError, did_you_mean, format_loc
from adk_eval_gate.core.files import load_json, read_text
from adk_eval_gate.core.json_types import JsonObject
from adk_eval_gate.core.validation import input_error_from, yaml_line_lookup
from adk_eval_gate.core.yaml_files import load_yaml
from adk_eval_gate.evalsets import agents_cli_config_keys as config_keys
from adk_eval_gate.evalsets.ignored_keys import once

# The evaluation service's registered metrics (the SDK's SUPPORTED_PREDEFINED_METRICS, 2.7.0); a bare name takes
# the newest version. tests/unit/evalsets/test_agents_cli_config.py holds this list equal to the SDK's.
PREDEFINED_METRICS = frozenset(
    f"{name}_v{version}"
    for name, versions in {
        "final_response_match": (2, 3),
        "final_response_quality": (1, 2),
        "final_response_reference_free": (1, 2),
        "gecko_text2image": (1, 2),
        "gecko_text2video": (1, 2),
        "general_quality": (1, 2),
        "grounding": (1, 2),
        "hallucination": (1, 2),
        "instruction_following": (1, 2),
        "multi_turn_general_quality": (1, 2),
        "multi_turn_task_success": (1,),
        "multi_turn_text_quality": (1, 2),
        "multi_turn_tool_use_quality": (1,),
        "multi_turn_trajectory_quality": (1,),
        "safety": (1, 3),
        "text_quality": (1, 2),
        "tool_use_quality": (1, 2),
    }.items()
    for version in versions
)


# The SDK's RubricMetric properties: a bare name's pinned version (GROUNDEDNESS is GROUNDING's alias).
RUBRIC_VERSIONS = {
    **dict.fromkeys(
        (
            "general_quality", "text_quality", "instruction_following", "safety", "multi_turn_general_quality",
            "multi_turn_text_quality", "multi_turn_tool_use_quality", "multi_turn_trajectory_quality",
            "multi_turn_task_success", "final_response_reference_free", "coherence", "fluency", "verbosity",
            "summarization_quality", "question_answering_quality", "multi_turn_chat_quality", "multi_turn_safety",
            "final_response_quality", "hallucination", "grounding", "tool_use_quality", "gecko_text2image",
            "gecko_text2video",
        ),
        "v1",
    ),
    "final_response_match": "v2",
}  # fmt: skip
ALIASES = {"groundedness": "grounding"}
# How a check names the config's field and its fix: (location, problem, fix) → the error to raise.
_Fail = Callable[[tuple[str | int, ...], str, str], InputError]


BODY_KEYS = ("prompt_template", "custom_function", "custom_function_file", "remote_custom_function")


def resolve_predefined(name: str) -> str | None:
    """`general_quality` → `general_quality_v2` (the newest registered version); a versioned name as it is."""
    lowered = name.lower()
    if lowered in PREDEFINED_METRICS:
        return lowered
    versions = [m for m in PREDEFINED_METRICS if m.rpartition("_v")[0] == lowered]
    return max(versions, key=lambda m: int(m.rpartition("_v")[2])) if versions else None


def is_known_bare_name(name: str) -> bool:
    """What the SDK resolves from a bare name in metrics_to_run: a registered metric, one of its RubricMetric
    names (some are definitions it downloads), or a metric the service computes itself."""
    lowered = name.lower()
    return (
        lowered in PREDEFINED_METRICS or ALIASES.get(lowered, lowered) in RUBRIC_VERSIONS or is_service_computed(name)
    )


def is_service_computed(name: str) -> bool:
    """`exact_match`, `bleu` and `rouge*` are computed by the service under their own names."""
    lowered = name.lower()
    return lowered in ("exact_match", "bleu") or lowered.startswith("rouge")


class CustomMetricEntry(BaseModel):
    # agents-cli hands an entry to the SDK's Metric or LLMMetric, which take any extra key: each is warned about
    model_config = ConfigDict(extra="ignore")

    name: str = Field(min_length=1)
    custom_function: str | None = None
    custom_function_file: str | None = None
    execution: Literal["local", "remote"] = "local"
    remote_custom_function: str | None = None
    prompt_template: str | None = Field(default=None, min_length=1)
    judge_model: str | None = None
    judge_model_sampling_count: int | None = Field(default=None, ge=1, le=32)
    judge_model_system_instruction: str | None = None
    judge_model_generation_config: JsonObject | None = None
    return_raw_output: bool | None = None
    result_parsing_function: str | None = None
    rubric_group_name: str | None = None  # refused with agents-cli's reason, not as an unknown key
    metric_spec_parameters: JsonObject | None = None
    metric_resource_name: str | None = None
    description: str | None = None  # documentation only; agents-cli ignores it too


class AgentsCliConfigFile(BaseModel):
    model_config = ConfigDict(extra="ignore")  # agents-cli reads the two keys with dict.get

    metrics_to_run: list[str] = Field(default_factory=list)
    custom_metrics: list[JsonObject] = Field(default_factory=list)  # each read as a CustomMetricEntry


MetricKind = Literal["code", "remote_code", "prompt_template", "predefined"]


@dataclass(frozen=True)
class AgentsCliMetric:
    name: str
    kind: MetricKind
    source: str | None = None  # code metrics: the `evaluate(instance)` source
    source_file: str | None = None  # where the source came from, for messages
    entry: JsonObject | None = None  # the custom_metrics entry as written (prompt-template and parameterised)


@dataclass(frozen=True)
class AgentsCliConfig:
    path: Path
    metrics: tuple[AgentsCliMetric, ...]
    warnings: tuple[InputError, ...] = ()  # what agents-cli ignores, one line each


def is_agents_cli_config(data: Any, path: Path, adk_cases: bool = False) -> bool:
    """ADK's eval_config.json has `criteria`; agents-cli's has `metrics_to_run` / a list of `custom_metrics`. A
    JSON file with both, read for ADK cases, is ADK's: ADK reads its criteria and ignores `metrics_to_run`."""
    if path.suffix.lower() in (".yaml", ".yml"):
        return True
    if not isinstance(data, dict):
        return False
    listed = isinstance(data.get("custom_metrics"), list)
    if adk_cases and "criteria" in data and not listed:
        return False
    return "metrics_to_run" in data or listed


def read_config_data(path: Path) -> tuple[Any, Any]:
    """(document, line lookup or None): YAML for .yaml/.yml, JSON otherwise, as agents-cli reads them."""
    if path.suffix.lower() in (".yaml", ".yml"):
        data, node = load_yaml(path, "eval config")
        return data, yaml_line_lookup(node)
    return load_json(path, "eval config"), None


def parse_agents_cli_config(data: Any, path: Path, lines: Any = None) -> AgentsCliConfig:
    def fail(loc: tuple[str | int, ...], problem: str, fix: str) -> InputError:
        return InputError(path, format_loc(loc) or None, problem, fix, line=lines(loc) if lines else None)

    if not isinstance(data, dict):
        raise fail(
            (), f"expected a mapping, got {type(data).__name__}", "write metrics_to_run: [...] and custom_metrics"
        )
    try:
        parsed = AgentsCliConfigFile.model_validate(data)
    except ValidationError as exc:
        raise input_error_from(exc, path, model=AgentsCliConfigFile, lines=lines) from None
    lines = lines or once(path)
    warnings = config_keys.top_level(data, path, lines)
    if not parsed.metrics_to_run:
        raise fail(
            ("metrics_to_run",),
            "is empty or missing: no metric would run",
            "list the metrics to run, e.g. metrics_to_run: [my_metric]",
        )
    pool = _custom_metrics(parsed, path, lines, warnings)
    metrics: list[AgentsCliMetric] = []
    for position, name in enumerate(parsed.metrics_to_run):
        if name in (m.name for m in metrics):
            raise fail(("metrics_to_run", position), f"{name!r} is listed twice", "list each metric once")
        if name not in pool:
            metrics.append(_bare_predefined(name, position, pool, fail))
            continue
        index, entry = pool[name]
        if entry.rubric_group_name is not None:
            raise fail(
                ("custom_metrics", index, "rubric_group_name"),
                "is not supported by agents-cli for custom metrics",
                "grade rubric_groups with a predefined rubric metric (metric_spec_parameters.rubric_group_key)",
            )
        has_body = any(getattr(entry, key) is not None for key in BODY_KEYS)
        if has_body and name.lower() == resolve_predefined(name):
            raise fail(
                ("custom_metrics", index, "name"),
                f"{name!r} is reserved by the evaluation service, which would ignore this definition",
                f"rename the metric, e.g. my_{name}",
            )
        if not has_body and resolve_predefined(name) is None and not is_service_computed(name):
            config_keys.blame_ignored_body(parsed.custom_metrics[index], index, name, fail)
            raise fail(
                ("custom_metrics", index),
                f"metric {name!r} has no custom_function, custom_function_file or prompt_template",
                "give it a body, or name a predefined metric to parameterise it",
            )
        metrics.append(_metric(entry, ("custom_metrics", index), path, fail))
    return AgentsCliConfig(path, tuple(metrics), tuple(warnings))


def _custom_metrics(
    parsed: AgentsCliConfigFile, path: Path, lines: Any, warnings: list[InputError]
) -> dict[str, tuple[int, CustomMetricEntry]]:
    """Each named custom metric with its index, the last definition of a name winning, as agents-cli keeps it;
    what agents-cli skips or ignores is added to `warnings`."""
    pool: dict[str, tuple[int, CustomMetricEntry]] = {}
    for index, raw in enumerate(parsed.custom_metrics):
        if not raw.get("name"):  # agents-cli skips an entry without a name
            warnings.append(config_keys.nameless(path, index, lines))
            continue
        try:
            entry = CustomMetricEntry.model_validate(raw)
        except ValidationError as exc:
            raise input_error_from(
                exc, path, prefix=["custom_metrics", index], model=CustomMetricEntry, lines=lines
            ) from None
        warnings += config_keys.entry_keys(raw, index, path, lines)
        if entry.name in pool:  # agents-cli keeps the last definition of a name
            warnings.append(config_keys.redefined(entry.name, index, pool[entry.name][0], path, lines))
        pool[entry.name] = (index, entry)
    return pool


def _bare_predefined(
    name: str, position: int, pool: dict[str, tuple[int, CustomMetricEntry]], fail: _Fail
) -> AgentsCliMetric:
    """A metric named in `metrics_to_run` alone: a predefined metric the SDK resolves by its bare name."""
    if not is_known_bare_name(name):
        known = sorted({m.rpartition("_v")[0] for m in PREDEFINED_METRICS} | set(RUBRIC_VERSIONS) | set(pool))
        guess = did_you_mean(name, known)
        raise fail(
            ("metrics_to_run", position),
            f"{name!r} is neither a custom metric of this file nor a predefined metric",
            f"did you mean `{guess}`?" if guess else "define it under custom_metrics",
        )
    if is_service_computed(name):
        raise fail(
            ("metrics_to_run", position),
            f"{name!r} alone cannot be resolved by the SDK (agents-cli's grade fails on it)",
            f"declare it under custom_metrics without a body: - name: {name}",
        )
    return AgentsCliMetric(name, "predefined")


def _metric(entry: CustomMetricEntry, where: tuple[str | int, ...], path: Path, fail: _Fail) -> AgentsCliMetric:
    written = entry.model_dump(exclude_none=True, exclude_defaults=True)
    if entry.custom_function is not None and entry.custom_function_file is not None:
        raise fail(
            (*where, "custom_function_file"),
            "and custom_function are both given",
            "keep one: inline source or a file beside the eval config",
        )
    source, source_file = entry.custom_function, None
    if entry.custom_function_file is not None:
        file = Path(entry.custom_function_file).expanduser()
        file = file if file.is_absolute() else path.parent / file
        if not file.is_file():
            raise fail(
                (*where, "custom_function_file"),
                f"{entry.custom_function_file!r} does not exist",
                "give a Python file path relative to the eval config's folder",
            )
        source, source_file = read_text(file, "custom metric file"), str(file)
    if source is not None:
        if entry.execution == "remote":
            return AgentsCliMetric(entry.name, "remote_code", source, source_file, written)
        _check_source(source, source_file or str(path), entry.name, (*where, "custom_function"), fail)
        return AgentsCliMetric(entry.name, "code", source, source_file, written)
    if entry.remote_custom_function is not None:
        return AgentsCliMetric(entry.name, "remote_code", entry.remote_custom_function, entry=written)
    if entry.prompt_template is not None:
        return AgentsCliMetric(entry.name, "prompt_template", entry=written)
    return AgentsCliMetric(entry.name, "predefined", entry=written)


def _check_source(source: str, shown: str, name: str, where: tuple[str | int, ...], fail: _Fail) -> None:
    """Compiled, never run, here: a syntax error or a missing `evaluate` is refused before any agent runs, as
    agents-cli refuses it before grading."""
    import ast

    try:
        tree = ast.parse(source, filename=shown)
    except SyntaxError as exc:
        raise fail(
            where,
            f"metric {name!r} does not compile: {exc.msg} (line {exc.lineno} of its source)",
            "fix the Python syntax",
        ) from None
    defines = {node.name for node in tree.body if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)} | {
        target.id
        for node in tree.body
        if isinstance(node, ast.Assign)
        for target in node.targets
        if isinstance(target, ast.Name)
    }
    if "evaluate" not in defines:
        raise fail(where, f"metric {name!r} defines no `evaluate` function", "define evaluate(instance) in its source")


def load_agents_cli_config(path: Path) -> AgentsCliConfig:
    data, lines = read_config_data(path)
    return parse_agents_cli_config(data, path, lines)
