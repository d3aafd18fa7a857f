"""Writing ADK eval history with google-adk's own models and manager, so the files are exactly what `adk eval`
writes; a history that cannot be written is a warning, never a lost run. Used in the run's own process and in the
agent host, which holds google-adk loaded. What goes into it (our results as ADK's plain data) is
`results/eval_history.py`."""

from __future__ import annotations

import sys
import types
import typing
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from adk_eval_gate.core.json_types import JsonObject

# Names one held list of ADK invocations: ("actual", tag, eval set id, eval id, run) as eval_history builds it.
HeldKey = tuple[object, ...]


@dataclass(frozen=True)
class Ref:
    """Stands for invocations the history writer already holds as ADK objects (`prevalidate`): `key` names the
    list, `index` the invocation in it."""

    key: HeldKey
    index: int


def save_case_results(
    manager: Any,
    app_name: str,
    eval_set_id: str,
    results: list[JsonObject],
    held: dict[HeldKey, list[Any]] | None = None,
) -> None:
    """ADK's manager writes the file itself, past our redacting writers: secrets the agent echoed are masked
    here first (held invocations were masked when `prevalidate` took them)."""
    from adk_eval_gate.core.redaction import redact_json, secret_values

    if secrets := secret_values():
        results = redact_json(results, secrets)
    for case in results:
        for item in case["eval_metric_result_per_invocation"]:
            for field in ("actual_invocation", "expected_invocation"):
                if isinstance(ref := item.get(field), Ref):
                    item[field] = (held or {})[ref.key][ref.index]
    manager.save_eval_set_result(app_name, eval_set_id, case_results_adapter().validate_python(results))


def prevalidate(invocations: list[JsonObject]) -> list[Any]:
    """ADK Invocations from their JSON, secrets masked: done while the agent runs, so the history costs little
    at the end."""
    from google.adk.evaluation.eval_case import Invocation

    from adk_eval_gate.core.redaction import redact_json

    validated: list[Any] = invocations_adapter().validate_python([fit(Invocation, i) for i in redact_json(invocations)])
    return validated


@cache
def invocations_adapter() -> Any:
    from google.adk.evaluation.eval_case import Invocation
    from pydantic import TypeAdapter

    return TypeAdapter(list[Invocation])


@cache
def case_results_adapter() -> Any:
    """Validates a list of ADK EvalCaseResults; building it imports and prepares ADK's result models, which the
    agent host does ahead of time, while the workers run."""
    from google.adk.evaluation.eval_result import EvalCaseResult
    from google.adk.evaluation.local_eval_set_results_manager import LocalEvalSetResultsManager  # noqa: F401
    from pydantic import TypeAdapter

    return TypeAdapter(list[EvalCaseResult])


def write_history_or_warn(
    agent: str,
    folder: Path,
    eval_set_id: str,
    results: list[JsonObject],
    held: dict[HeldKey, list[Any]] | None = None,
) -> None:
    """Saves one eval set's `case_results` where `adk web` looks for the agent folder's history; a history that
    cannot be written is a warning, never a lost run."""
    try:
        from google.adk.evaluation.local_eval_set_results_manager import LocalEvalSetResultsManager

        manager = LocalEvalSetResultsManager(agents_dir=str(folder.parent))
        save_case_results(manager, folder.name, eval_set_id, results, held)
    except Exception as exc:  # a read-only checkout, an id ADK refuses as a file name, ...
        print(f"warning: ADK eval history for {agent}/{eval_set_id} not written: {exc}", file=sys.stderr)


def history_folder(agent: Any, base_dir: Path) -> Path | None:
    """The agent folder whose `.adk/eval_history` `adk web` reads, when this agent's results belong there."""
    target = agent.settings.target
    if target.kind != "adk" or not target.eval_history:
        return None
    folder = Path(target.agent)
    folder = folder if folder.is_absolute() else base_dir / folder
    return folder if folder.is_dir() else None  # a module:attribute agent has no folder for adk web to list


def fit(model: Any, data: Any) -> Any:
    """`data` in the schema of the installed google-adk, which the agent pins (2.2 up): fields an older release
    does not have (`duration`, an event's `usage_metadata`, ...) are left out, as that release's `adk eval`
    would write them, and a field it requires but allows to be null is written as null."""
    fields = getattr(model, "model_fields", None)
    if fields is None or not isinstance(data, dict):
        return data
    by_key = {key: field for name, field in fields.items() for key in (name, field.alias) if key}
    closed = model.model_config.get("extra") == "forbid"
    out = {key: _fit_type(by_key[key].annotation, value) for key, value in data.items() if key in by_key}
    out.update({key: value for key, value in data.items() if key not in by_key and not closed})
    for name, field in fields.items():
        if field.is_required() and name not in out and field.alias not in out and _nullable(field.annotation):
            out[name] = None
    return out


def _fit_type(annotation: Any, value: Any) -> Any:
    origin, args = typing.get_origin(annotation), [a for a in typing.get_args(annotation) if a is not type(None)]
    if origin in (typing.Union, types.UnionType) and len(args) == 1:  # Optional[X]
        return _fit_type(args[0], value)
    if isinstance(value, list) and origin is list and args:
        return [_fit_type(args[0], item) for item in value]
    models = [a for a in ([annotation] if hasattr(annotation, "model_fields") else args) if hasattr(a, "model_fields")]
    if not models or not isinstance(value, dict):
        return value
    # a union of models (IntermediateData | InvocationEvents): the one whose fields the value uses
    best = max(models, key=lambda m: len(set(value) & {k for n, f in m.model_fields.items() for k in (n, f.alias)}))
    return fit(best, value)


def _nullable(annotation: Any) -> bool:
    return annotation is None or type(None) in typing.get_args(annotation)
