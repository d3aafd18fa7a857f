"""Reading and writing the history where the baseline is kept. The one public way in and out:
`load_history` before a comparison, `next_history` after a default-branch run (the store saves it with the
baseline: both or neither). It is stored as `history.db` (`database.py`); a `history.json` of earlier versions is
read when no database is there yet, and the next record writes it as a database (the migration).

A history that cannot be used — unreadable JSON, another schema version, another repository's or another
config's, or a store that failed to answer — is an error, never "no history": the gate fails closed on it and
a default-branch run does not write over it. Only a history that is not there yet starts afresh.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import PurePosixPath

from pydantic import ValidationError

from adk_eval_gate.baseline.history.database import MAGIC, StoredHistory, history_of
from adk_eval_gate.baseline.history.record_format import FORMAT, History
from adk_eval_gate.baseline.history.records import record_of
from adk_eval_gate.baseline.stores import BaselineStore, LoadOutcome, PendingHistory, RawHistory, build_store
from adk_eval_gate.config.history import HistorySection
from adk_eval_gate.config.loader import Workflow
from adk_eval_gate.core.clip import single_line
from adk_eval_gate.core.errors import format_loc
from adk_eval_gate.core.files import MAX_FILE_BYTES
from adk_eval_gate.core.paths import relative_to_root, repository_root
from adk_eval_gate.core.schema_versions import (
    HISTORY_DATABASE_READ,
    HISTORY_DATABASE_VERSION,
    HISTORY_SCHEMA_READ,
    HISTORY_SCHEMA_VERSION,
)
from adk_eval_gate.github.context import ActionsContext
from adk_eval_gate.results.results_format import ResultsFile

FILE_NAME = "history.db"
LEGACY_FILE_NAME = "history.json"  # earlier versions' history: read, and migrated by the next record
# The history `ci` writes into its output folder, for the artifact store's upload step (stores/artifact.py): the
# name upload steps have always named, the database inside.
CARRIED_FILE_NAME = "history.json"
START_OVER = "fix it, or delete it to start a new history (it is never reset silently)"


class HistoryError(Exception):
    """Why a history cannot be used, in one line: `where: problem; fix`."""

    def __init__(self, source: str, problem: str, fix: str = START_OVER) -> None:
        self.source, self.problem, self.fix = source, problem, fix
        super().__init__(single_line(f"{source}: {problem}; {fix}"))


@dataclass
class HistoryState:
    """The history a run starts from, and where it came from."""

    settings: HistorySection
    source: str
    repository: str | None
    config: str
    history: StoredHistory | None = None  # None with no error: there is none yet
    failure: HistoryError | None = None
    raw: RawHistory | None = None  # what was read: a write replaces exactly that
    notes: list[str] = field(default_factory=list)

    @property
    def error(self) -> str | None:
        return None if self.failure is None else str(self.failure)


def config_identity(workflow: Workflow, context: ActionsContext) -> str:
    root = repository_root(workflow.base_dir, context.workspace)
    return relative_to_root(workflow.path, root) or workflow.path.name


def same_config(written: str, ours: str) -> bool:
    """The repository root is found differently in Actions and on a laptop: a path that ends the other is the same
    config seen from two roots."""
    a, b = PurePosixPath(written).parts, PurePosixPath(ours).parts
    shorter, longer = (a, b) if len(a) <= len(b) else (b, a)
    return bool(shorter) and longer[len(longer) - len(shorter) :] == shorter


def parse_history(
    data: bytes, source: str, *, repository: str | None, config: str, every_summary: bool = True
) -> StoredHistory:
    """A history database, or a JSON history of earlier versions migrated into one (in memory: the store keeps
    the old file until the next record is written). `every_summary` False leaves the records' summaries to be
    checked as they are read (`history show`, which reads a few); a run that compares or stores checks them all."""
    if data.startswith(MAGIC):
        stored = _parse_database(data, source, repository=repository, config=config)
        if every_summary:
            try:
                stored.records.check()
            except ValueError as exc:
                raise HistoryError(source, str(exc)) from None
        return stored
    return StoredHistory.from_history(parse_json_history(data, source, repository=repository, config=config))


def _check_owner(source: str, written_in: str | None, written_for: str, repository: str | None, config: str) -> None:
    if repository and written_in and written_in != repository:
        raise HistoryError(source, f"was written in the repository {written_in}, not {repository}")
    if not same_config(written_for, config):
        raise HistoryError(source, f"belongs to the config {written_for}, not {config}")


def _parse_database(data: bytes, source: str, *, repository: str | None, config: str) -> StoredHistory:
    if len(data) > MAX_FILE_BYTES:
        raise HistoryError(source, f"is {len(data)} bytes, over the {MAX_FILE_BYTES} byte limit")
    try:
        stored = StoredHistory.from_bytes(data)
    except ValueError as exc:
        raise HistoryError(source, str(exc)) from None
    if stored.format != FORMAT:
        raise HistoryError(source, "is not an adk-eval-gate history")
    if stored.schema_version not in HISTORY_DATABASE_READ:
        raise HistoryError(
            source,
            f"has schema_version {stored.schema_version!r}; this version reads "
            f"{' or '.join(HISTORY_DATABASE_READ)} (writing {HISTORY_DATABASE_VERSION})",
        )
    _check_owner(source, stored.repository, stored.config, repository, config)
    return stored


def parse_json_history(data: bytes, source: str, *, repository: str | None, config: str) -> History:
    """A history.json (schema_version 1 or 2): what earlier versions stored, and what `history show --json` prints."""

    def refuse(problem: str) -> HistoryError:
        return HistoryError(source, problem)

    if len(data) > MAX_FILE_BYTES:
        raise refuse(f"is {len(data)} bytes, over the {MAX_FILE_BYTES} byte limit")
    try:
        parsed = json.loads(data)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        where = f" (line {exc.lineno}, column {exc.colno}: {exc.msg})" if isinstance(exc, json.JSONDecodeError) else ""
        raise refuse(f"is not JSON{where}") from None
    except RecursionError:
        raise refuse("is nested too deeply") from None
    if not isinstance(parsed, dict) or parsed.get("format") != FORMAT:
        raise refuse("is not an adk-eval-gate history")
    version = parsed.get("schema_version")
    if version not in HISTORY_SCHEMA_READ or isinstance(version, bool):
        raise refuse(
            f"has schema_version {version!r}; this version reads "
            f"{' or '.join(map(str, HISTORY_SCHEMA_READ))} (writing {HISTORY_SCHEMA_VERSION})"
        )
    try:
        history = History.model_validate(parsed)
    except ValidationError as exc:
        first = exc.errors(include_url=False)[0]
        message = first["msg"].removeprefix("Value error, ")
        raise refuse(f"is invalid at {format_loc(first['loc']) or 'the top'}: {message}") from None
    except RecursionError:
        raise refuse("is nested too deeply") from None
    _check_owner(source, history.repository, history.config, repository, config)
    return history


def load_history(
    workflow: Workflow,
    context: ActionsContext,
    outcome: LoadOutcome | None = None,
    store: BaselineStore | None = None,
    *,
    every_summary: bool = True,
) -> HistoryState | None:
    """None when the config keeps no history (`history.enabled: false`, `baseline.store: none`). `every_summary`:
    see `parse_history`."""
    settings = workflow.settings.history
    if not settings.enabled or workflow.settings.baseline.store == "none":
        return None
    raw = outcome.history if outcome is not None and outcome.history is not None else None
    if raw is None:
        raw = (store or build_store(workflow, context)).read_history()
    state = HistoryState(settings, raw.source, context.repository, config_identity(workflow, context), raw=raw)
    if raw.error is not None:
        fix = raw.fix or "re-run when the store answers"
        state.failure = HistoryError(raw.source, f"could not be read: {raw.error}", fix)
    elif raw.data is None:
        state.notes.append(raw.note or f"no history yet at {raw.source}: the default branch's runs start one")
    else:
        try:
            state.history = parse_history(
                raw.data, raw.source, repository=state.repository, config=state.config, every_summary=every_summary
            )
        except HistoryError as exc:
            state.failure = exc
    return state


def history_text(history: History | StoredHistory) -> str:
    """The history as JSON (schema_version 3, `adk-eval-gate schema history`); whole, so for small ones (tests)."""
    if isinstance(history, StoredHistory):
        history = history_of(history)
    return history.model_dump_json() + "\n"


def write_json(history: StoredHistory, write: Callable[[str], object], source: str) -> None:
    """The history as JSON (schema_version 3), written a record at a time: memory stays that of one record."""
    head = History(repository=history.repository, config=history.config, records=[]).model_dump_json()
    write(head.removesuffix("]}"))
    try:
        for position, record in enumerate(history.iter_full()):
            write(("," if position else "") + record.model_dump_json())
    except ValueError as exc:
        raise HistoryError(source, str(exc)) from None
    write("]}\n")


@dataclass(frozen=True)
class HistoryStep:
    """What a default-branch run does to the history: the history to store with its baseline (None: none to
    store), the history its output folder carries, and a line for the log."""

    pending: PendingHistory | None
    carried: bytes | None
    note: str


def next_history(
    state: HistoryState | None, results: ResultsFile, *, whole_suite: bool, sha: str | None = None
) -> HistoryStep:
    """The run's record joins the history (a whole-suite run only). A history that cannot be read was refused
    before this (`HistoryState.failure`): neither it nor the baseline may advance then. `sha`: the commit when the
    results do not name one (agents-cli's own results files never do)."""
    if state is None:
        return HistoryStep(None, None, "")
    if state.error is not None:
        raise ValueError(f"the history failed to load, so it cannot advance: {state.error}")
    if not whole_suite:
        carried = state.history.to_bytes() if state.history is not None else None
        return HistoryStep(None, carried, "history unchanged: only a run of the whole suite is recorded")
    history = state.history or StoredHistory.empty(state.repository, state.config)
    updated = history.with_record(record_of(results, sha), state.settings.max_records)
    data = updated.to_bytes()
    read = state.raw or RawHistory(state.source)
    pending = PendingHistory(data, read)
    where = read.source
    if read.legacy:
        where = f"{read.source} migrated to {FILE_NAME}"
    elif read.data is not None and not read.data.startswith(MAGIC):  # the artifact's history.json keeps its name
        where = f"{read.source} migrated from JSON to a database (the file keeps its name)"
    return HistoryStep(pending, data, f"history: {len(updated.records)} record(s), {where}")
