"""`replay` target: actual invocations recorded elsewhere, matched to expected cases by eval_id.

Sources, detected by content:
* ADK eval history, `*.evalset_result.json` written by `adk eval` / AgentEvaluator (plain JSON, or the
  double-encoded JSON string ADK <= 1.21 wrote), or a directory of them (e.g. `.adk/eval_history`);
* an evalset-shaped file whose cases' `conversation` holds the actual invocations;
* an adk-eval-gate results file (its recorded actual invocations);
* agents-cli traces (`eval generate`'s output, or the ones we write beside our results): agents_cli_replay.py.

A case recorded several times (AgentEvaluator's num_runs, several history files) has several runs, newest
history file first; run k of the gate takes the k-th recording.
"""

from __future__ import annotations

import copy
import json
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from adk_eval_gate.config.globs import GlobTooWide, walk_glob
from adk_eval_gate.core.errors import InputError, format_loc
from adk_eval_gate.core.files import load_json, parse_json, read_text
from adk_eval_gate.core.json_types import JsonObject
from adk_eval_gate.core.paths import shown_path
from adk_eval_gate.core.schema_versions import RESULTS_SCHEMA_VERSION as SCHEMA_VERSION
from adk_eval_gate.core.validation import input_error_from
from adk_eval_gate.evalsets.adk_eval_schema import EvalCase, Invocation
from adk_eval_gate.evalsets.agents_cli_dataset import is_agents_cli_dataset
from adk_eval_gate.evalsets.loader import parse_eval_set
from adk_eval_gate.targets.agents_cli_replay import load_generated
from adk_eval_gate.targets.case_run import CaseRun

HISTORY_SUFFIX = ".evalset_result.json"
FAILED_STATUS = 2  # ADK's EvalStatus.FAILED; a case result with no invocations and this status crashed in inference


@dataclass
class Recording:
    invocations: tuple[Invocation, ...] | None
    error: str | None
    source: str


@dataclass
class ActualsIndex:
    by_set_and_case: dict[tuple[str, str], list[Recording]] = field(default_factory=lambda: defaultdict(list))
    by_case: dict[str, list[Recording]] = field(default_factory=lambda: defaultdict(list))

    def add(self, eval_set_id: str | None, eval_id: str, recording: Recording) -> None:
        if eval_set_id is not None:
            self.by_set_and_case[(eval_set_id, eval_id)].append(recording)
        self.by_case[eval_id].append(recording)

    def lookup(self, eval_set_id: str, eval_id: str) -> list[Recording]:
        # Prefer an exact (set, case) match; fall back to eval_id alone because many actuals files carry
        # a different eval_set_id (legacy files get random ids from ADK).
        return self.by_set_and_case.get((eval_set_id, eval_id)) or self.by_case.get(eval_id, [])


def _get(mapping: JsonObject, snake: str, default: object = None) -> Any:
    if snake in mapping:
        return mapping[snake]
    head, *rest = snake.split("_")
    return mapping.get(head + "".join(word.title() for word in rest), default)


def validate_recorded_invocation(data: object, path: Path, loc: list[str | int]) -> Invocation:
    """Recorded invocations may come from a newer ADK with fields 2.13 lacks: drop unknown keys, keep the rest."""
    payload = copy.deepcopy(data)
    for _ in range(50):
        try:
            return Invocation.model_validate(payload)
        except ValidationError as exc:
            extras = [e["loc"] for e in exc.errors() if e["type"] == "extra_forbidden"]
            if not extras or len(extras) != len(exc.errors()):
                raise input_error_from(exc, path, prefix=loc, model=Invocation) from None
            for extra in extras:
                _delete(payload, extra)
    raise InputError(path, None, "too many unknown fields in a recorded invocation", "check the file's format")


def _delete(payload: object, loc: tuple[str | int, ...]) -> None:
    target = payload
    for part in loc[:-1]:
        if (isinstance(target, dict) and part in target) or (
            isinstance(target, list) and isinstance(part, int) and part < len(target)
        ):
            target = target[part]  # type: ignore[index]  # a str part only ever indexes a dict (checked above)
        else:
            return  # union branch names appear in loc; the key lives one level down
    if isinstance(target, dict):
        target.pop(loc[-1], None)


def _expect(value: object, kind: type | tuple[type, ...], path: Path, loc: list[str | int], what: str) -> Any:
    """Actuals come from other tools and other versions: a field of the wrong type is a one-line error."""
    if not isinstance(value, kind) or (isinstance(value, bool) and kind is not bool):
        raise InputError(
            path,
            format_loc(loc) or None,
            f"is {type(value).__name__}, expected {what}",
            "point at an ADK eval history, an evalset of actuals or an adk-eval-gate results file",
        )
    return value


def _load_history(data: JsonObject, path: Path, index: ActualsIndex) -> None:
    set_id = _get(data, "eval_set_id")
    if set_id is not None:
        _expect(set_id, str, path, ["eval_set_id"], "a string")
    cases = _expect(_get(data, "eval_case_results") or [], list, path, ["eval_case_results"], "a list")
    for i, case in enumerate(cases):
        _expect(case, dict, path, ["eval_case_results", i], "an object")
        eval_id = _expect(_get(case, "eval_id", ""), str, path, ["eval_case_results", i, "eval_id"], "a string")
        rows = _expect(
            _get(case, "eval_metric_result_per_invocation") or [],
            list,
            path,
            ["eval_case_results", i, "eval_metric_result_per_invocation"],
            "a list",
        )
        if not rows:
            status = _get(case, "final_eval_status")
            error = (
                "inference failed when this result was recorded"
                if status == FAILED_STATUS
                else "no invocations recorded"
            )
            index.add(set_id, eval_id, Recording(None, error, str(path)))
            continue
        invocations = []
        for j, row in enumerate(rows):
            loc: list[str | int] = ["eval_case_results", i, "eval_metric_result_per_invocation", j]
            _expect(row, dict, path, loc, "an object")
            invocations.append(
                validate_recorded_invocation(_get(row, "actual_invocation"), path, [*loc, "actual_invocation"])
            )
        index.add(set_id, eval_id, Recording(tuple(invocations), None, str(path)))


def _load_results_file(data: JsonObject, path: Path, index: ActualsIndex) -> None:
    version = data.get("schema_version")
    if version != SCHEMA_VERSION or isinstance(version, bool):
        raise InputError(
            path,
            "schema_version",
            f"{version!r} is not a results schema this version reads ({SCHEMA_VERSION})",
            "record the actuals with a matching adk-eval-gate, or upgrade it",
        )
    for s, eval_set in enumerate(_expect(data.get("eval_sets") or [], list, path, ["eval_sets"], "a list")):
        _expect(eval_set, dict, path, ["eval_sets", s], "an object")
        set_id = _expect(eval_set.get("eval_set_id"), str, path, ["eval_sets", s, "eval_set_id"], "a string")
        for c, case in enumerate(_expect(eval_set.get("cases") or [], list, path, ["eval_sets", s, "cases"], "a list")):
            where: list[str | int] = ["eval_sets", s, "cases", c]
            _expect(case, dict, path, where, "an object")
            eval_id = _expect(case.get("eval_id"), str, path, [*where, "eval_id"], "a string")
            for r, run in enumerate(_expect(case.get("runs") or [], list, path, [*where, "runs"], "a list")):
                _expect(run, dict, path, [*where, "runs", r], "an object")
                error = run.get("error")
                if error is not None:
                    _expect(error, str, path, [*where, "runs", r, "error"], "a string")
                recorded = run.get("actual_invocations")
                if error or recorded is None:
                    index.add(set_id, eval_id, Recording(None, error or "no invocations recorded", str(path)))
                    continue
                loc: list[str | int] = [*where, "runs", r, "actual_invocations"]
                invocations = tuple(
                    validate_recorded_invocation(inv, path, [*loc, k])
                    for k, inv in enumerate(_expect(recorded, list, path, loc, "a list"))
                )
                index.add(set_id, eval_id, Recording(invocations, None, str(path)))


def _load_file(path: Path, index: ActualsIndex) -> None:
    data = load_json(path, "actuals file")
    if isinstance(data, str):  # ADK <= 1.21 wrote history files as a JSON string holding the JSON
        data = parse_json(data, path, "actuals file (a JSON string holding the history)")
    if isinstance(data, dict) and "eval_sets" in data:
        _load_results_file(data, path, index)
    elif isinstance(data, dict) and (_get(data, "eval_case_results") is not None or _get(data, "eval_set_result_id")):
        _load_history(data, path, index)
    elif is_agents_cli_dataset(data, path):
        load_generated(data, path, lambda eval_id, inv: index.add(None, eval_id, Recording((inv,), None, str(path))))
    else:
        loaded = parse_eval_set(data, path)
        for case in loaded.eval_set.eval_cases:
            if case.conversation is None:
                continue
            index.add(loaded.eval_set.eval_set_id, case.eval_id, Recording(tuple(case.conversation), None, str(path)))


def _history_time(path: Path) -> float:
    try:
        data = json.loads(read_text(path, "actuals file"))
        if isinstance(data, str):
            data = json.loads(data)
        return float(_get(data, "creation_timestamp", 0.0) or 0.0)
    except (InputError, ValueError, TypeError, AttributeError, RecursionError):
        return 0.0  # the load that follows reports what is wrong with the file


def _expand(paths: tuple[Path, ...]) -> list[Path]:
    files: list[Path] = []
    for path in paths:
        if path.is_dir():
            try:
                found = walk_glob(path / "**" / f"*{HISTORY_SUFFIX}")
            except GlobTooWide as exc:
                raise InputError(
                    path, "actuals", f"the directory {exc}", "point at the folder of eval history files"
                ) from None
            if not found:
                raise InputError(
                    path,
                    "actuals",
                    f"directory has no *{HISTORY_SUFFIX} files",
                    "run `adk eval` first or point at the results files",
                )
            # Newest first: run 0 of the gate is the latest `adk eval` of the set.
            files.extend(sorted(found, key=_history_time, reverse=True))
        else:
            files.append(path)
    return files


class ReplayTarget:
    kind = "replay"

    def __init__(self, index: ActualsIndex, sources: list[Path]) -> None:
        self._index = index
        self._sources = sources

    @classmethod
    def from_paths(cls, paths: tuple[Path, ...], base_dir: Path | None = None) -> ReplayTarget:
        index = ActualsIndex()
        try:
            files = _expand(paths)
            for path in files:
                _load_file(path, index)
        except InputError as exc:
            if base_dir is None or not exc.file or not Path(exc.file).is_absolute():
                raise
            raise exc.with_file(shown_path(Path(exc.file), base_dir)) from None
        return cls(index, files)

    def recordings(self, eval_set_id: str, eval_id: str) -> list[Recording]:
        return self._index.lookup(eval_set_id, eval_id)

    async def run_case(self, eval_set_id: str, case: EvalCase, run: int) -> CaseRun:
        recordings = self.recordings(eval_set_id, case.eval_id)
        if run >= len(recordings):
            where = ", ".join(p.name for p in self._sources[:3]) + (" ..." if len(self._sources) > 3 else "")
            have = f"only {len(recordings)} recorded run(s)" if recordings else "no recorded actuals"
            return CaseRun(eval_set_id, case.eval_id, run, None, f"{have} for eval_id {case.eval_id!r} in {where}")
        recording = recordings[run]
        return CaseRun(eval_set_id, case.eval_id, run, recording.invocations, recording.error)

    async def start(self) -> None:
        return None

    async def aclose(self) -> None:
        return None
