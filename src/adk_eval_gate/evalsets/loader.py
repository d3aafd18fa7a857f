"""Loads an eval file in any of the shapes users have on disk, into ADK's EvalSet."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from pydantic import ValidationError

from adk_eval_gate.core.errors import InputError
from adk_eval_gate.core.files import load_json
from adk_eval_gate.core.validation import input_error_from
from adk_eval_gate.evalsets import agents_cli_dataset, eval_file_keys, legacy
from adk_eval_gate.evalsets.adk_eval_schema import EvalSet
from adk_eval_gate.evalsets.eval_file_keys import EvalSetShape
from adk_eval_gate.evalsets.ignored_keys import once


@dataclass(frozen=True)
class EvalSetFile:
    path: Path
    eval_set: EvalSet
    shape: EvalSetShape
    warnings: tuple[InputError, ...] = ()  # keys the reference reader ignores (evalsets/eval_file_keys.py)


def parse_eval_set(data: object, path: Path) -> EvalSetFile:
    if agents_cli_dataset.is_agents_cli_dataset(data, path):
        eval_set = agents_cli_dataset.parse_dataset(data, path)
        _check_cases(eval_set, path)
        return EvalSetFile(path, eval_set, "agents_cli", eval_file_keys.ignored(data, path, "agents_cli"))
    shape: EvalSetShape
    try:
        if isinstance(data, dict):
            if "eval_cases" not in data and "evalCases" in data:
                raise InputError(
                    path,
                    "evalCases",
                    "ADK reads the eval set's own keys in snake_case only",
                    "rename evalSetId/evalCases to eval_set_id/eval_cases",
                )
            if "eval_cases" not in data and "eval_set_id" not in data:
                raise InputError(
                    path,
                    None,
                    "is not an ADK eval set (no `eval_set_id` / `eval_cases`)",
                    "use the EvalSet schema or a legacy list of {query, reference} turns",
                )
            eval_set, shape = EvalSet.model_validate(data), "evalset"
        elif isinstance(data, list):
            if not data:
                raise InputError(path, None, "holds an empty list: no eval cases", "add at least one case")
            if legacy.is_flat_turns(data):
                eval_set, shape = legacy.convert_flat_turns(data, path), "legacy_turns"
            elif legacy.is_named_list(data):
                eval_set, shape = legacy.convert_named_list(data, path), "legacy_named"
            else:
                raise InputError(
                    path,
                    "[0]",
                    "is neither a legacy turn ({query, ...}) nor a named case ({name, data})",
                    "use the EvalSet schema, a list of {query, expected_tool_use, reference} turns, "
                    "or a list of {name, data} cases",
                )
        else:
            raise InputError(
                path, None, f"expected a JSON object or list, got {type(data).__name__}", "use ADK's EvalSet schema"
            )
    except ValidationError as exc:
        raise input_error_from(exc, path, model=EvalSet) from None
    _check_cases(eval_set, path)
    return EvalSetFile(path, eval_set, shape, eval_file_keys.ignored(data, path, shape))


def _check_cases(eval_set: EvalSet, path: Path) -> None:
    if not eval_set.eval_cases:
        raise InputError(path, "eval_cases", "is empty", "add at least one eval case")
    seen: dict[str, int] = {}
    for index, case in enumerate(eval_set.eval_cases):
        if not case.eval_id.strip():
            raise InputError(path, f"eval_cases[{index}].eval_id", "is empty", "give every case a unique eval_id")
        if case.eval_id in seen:
            raise InputError(
                path,
                f"eval_cases[{index}].eval_id",
                f"duplicate {case.eval_id!r} (also eval_cases[{seen[case.eval_id]}])",
                "give every case a unique eval_id",
            )
        seen[case.eval_id] = index
        if case.conversation is not None and not case.conversation:
            raise InputError(path, f"eval_cases[{index}].conversation", "is empty", "add at least one invocation")


def load_eval_set(path: Path) -> EvalSetFile:
    data = load_json(path, "eval set")  # its own errors stand as they are: only a parsed file is composed for lines
    try:
        return parse_eval_set(data, path)
    except InputError as exc:
        raise with_line(exc, path) from None


def with_line(exc: InputError, path: Path) -> InputError:
    """The error with the line of its field, for the errors raised by hand without one."""
    if exc.line is not None or not exc.field or exc.file != str(path):
        return exc
    loc = [int(part[1:-1]) if part.startswith("[") else part for part in _LOC_PARTS.findall(exc.field)]
    return exc.with_file(path, once(path)(loc))


_LOC_PARTS = re.compile(r"\[\d+\]|[^.\[\]]+")
