"""What agents-cli 1.11 ignores in an `eval_config.yaml`, as warnings that say what it does instead.

agents-cli reads `metrics_to_run` and `custom_metrics` with `dict.get`, keeps custom metrics by `name` (an entry
without one is skipped, a later entry of the same name replaces an earlier one) and hands each entry to the SDK's
`Metric` (only `name` and the compiled `evaluate`) or `LLMMetric` (which keeps unknown keys and sends none of them).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from adk_eval_gate.core.errors import InputError, did_you_mean
from adk_eval_gate.core.json_types import JsonObject
from adk_eval_gate.core.validation import LineLookup
from adk_eval_gate.evalsets.ignored_keys import ignored_key, unknown_keys

TOP_LEVEL = ("metrics_to_run", "custom_metrics")
# Every key a custom metric entry may carry (agents_cli_config.CustomMetricEntry's fields).
ENTRY_KEYS = (
    "name",
    "custom_function",
    "custom_function_file",
    "execution",
    "remote_custom_function",
    "prompt_template",
    "judge_model",
    "judge_model_sampling_count",
    "judge_model_system_instruction",
    "judge_model_generation_config",
    "return_raw_output",
    "result_parsing_function",
    "rubric_group_name",
    "metric_spec_parameters",
    "metric_resource_name",
    "description",
)
BODY_KEYS = ("custom_function", "custom_function_file", "prompt_template", "remote_custom_function")


def top_level(data: JsonObject, path: Path, lines: LineLookup) -> list[InputError]:
    return [
        ignored_key(
            path, (key,), TOP_LEVEL, "is ignored by agents-cli, which reads metrics_to_run and custom_metrics", lines
        )
        for key in unknown_keys(data, TOP_LEVEL)
    ]


def nameless(path: Path, index: int, lines: LineLookup) -> InputError:
    return InputError(
        path,
        f"custom_metrics[{index}]",
        "has no name, so agents-cli skips it",
        "give it a `name` and list that name under metrics_to_run",
        line=lines(("custom_metrics", index)),
    )


def redefined(name: str, index: int, earlier: int, path: Path, lines: LineLookup) -> InputError:
    return InputError(
        path,
        f"custom_metrics[{index}].name",
        f"defines {name!r} again: agents-cli uses this definition and ignores custom_metrics[{earlier}]",
        "remove one of the two, or rename it",
        line=lines(("custom_metrics", index, "name")),
    )


def entry_keys(raw: JsonObject, index: int, path: Path, lines: LineLookup) -> list[InputError]:
    found = []
    for key in unknown_keys(raw, ENTRY_KEYS):
        loc = ("custom_metrics", index, key)
        if key == "custom_function_name":
            found.append(_function_name(raw, loc, path, lines))
        elif key == "type":
            effect = (
                "is not read by agents-cli: a metric's kind comes from its keys "
                "(custom_function: code run locally, prompt_template: an LLM judge, neither: a predefined metric)"
            )
            found.append(InputError(path, f"custom_metrics[{index}].type", effect, "remove it", line=lines(loc)))
        elif key == "threshold":
            name = raw.get("name")
            effect = "is not read by agents-cli, whose metrics carry no thresholds (a score is a score)"
            fix = f"give it in the gate's workflow instead: thresholds: {{{name}: {raw[key]}}}"
            found.append(InputError(path, f"custom_metrics[{index}].threshold", effect, fix, line=lines(loc)))
        else:
            found.append(
                ignored_key(path, loc, ENTRY_KEYS, "is not a custom metric field, so agents-cli ignores it", lines)
            )
    return found


def _function_name(raw: JsonObject, loc: tuple[str | int, ...], path: Path, lines: LineLookup) -> InputError:
    """Loud: with a source that defines both, the metric silently scores with a function its author did not name."""
    named = raw.get("custom_function_name")
    where = f"custom_metrics[{loc[1]}].custom_function_name"
    if named == "evaluate":
        effect = "is not read by agents-cli, which always calls `evaluate(instance)` (the function named here)"
        return InputError(path, where, effect, "remove it", line=lines(loc))
    effect = (
        f"is not read by agents-cli 1.11: the metric scores with the source's `evaluate(instance)`, "
        f"never with {named!r}"
    )
    return InputError(
        path,
        where,
        effect,
        f"rename {named!r} to `evaluate` (or have evaluate call it) and remove custom_function_name",
        line=lines(loc),
    )


def blame_ignored_body(raw: JsonObject, index: int, name: str, fail: Callable[..., InputError]) -> None:
    """A metric left without a body by a key agents-cli ignores is refused on that key (agents-cli refuses the
    metric: it "needs a 'prompt_template' or 'custom_function'")."""
    for key in unknown_keys(raw, ENTRY_KEYS):
        guess = "custom_function" if key == "custom_function_name" else did_you_mean(key, BODY_KEYS)
        if guess:
            raise fail(
                ("custom_metrics", index, key),
                f"is not read by agents-cli, so metric {name!r} has no custom_function, custom_function_file "
                "or prompt_template (agents-cli refuses it)",
                f"did you mean `{guess}`?"
                + (" (its source must define evaluate(instance))" if key == "custom_function_name" else ""),
            )
