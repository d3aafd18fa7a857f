"""The file store (a results file committed beside the config) and the store that keeps nothing."""

from __future__ import annotations

from pathlib import Path

from adk_eval_gate.baseline.stores.stored_baseline import (
    LoadedBaseline,
    LoadOutcome,
    PendingHistory,
    RawHistory,
    identity_of,
    slim,
)
from adk_eval_gate.config.loader import Workflow
from adk_eval_gate.config.workflow_settings import FileBaseline
from adk_eval_gate.core.errors import InputError
from adk_eval_gate.core.files import MAX_FILE_BYTES, read_bytes, replace_together
from adk_eval_gate.results.results_format import ResultsFile

HISTORY_FILE = "history.db"  # beside the baseline file: both move, and are reviewed, together
LEGACY_HISTORY_FILE = "history.json"  # earlier versions': read until the next record writes history.db


class FileStore:
    def __init__(self, settings: FileBaseline, workflow: Workflow) -> None:
        path = Path(settings.path)
        self.path = path if path.is_absolute() else workflow.base_dir / path
        self.label = settings.path  # as written in the config: the same on every machine
        self.history_path = self.path.parent / HISTORY_FILE
        self.history_label = (Path(settings.path).parent / HISTORY_FILE).as_posix()
        self.legacy_path = self.path.parent / LEGACY_HISTORY_FILE
        self.legacy_label = (Path(settings.path).parent / LEGACY_HISTORY_FILE).as_posix()

    def load(self) -> LoadOutcome:
        if not self.path.exists():
            return LoadOutcome(
                None, [f"no baseline at {self.label} yet: run `adk-eval-gate baseline update` and commit it"]
            )
        from adk_eval_gate.results.build import read_results  # the scorers' imports: not for reading the history

        results = read_results(self.path)
        return LoadOutcome(LoadedBaseline(results, identity_of(results, self.label)))

    def save(self, results: ResultsFile, history: PendingHistory | None = None) -> str:
        """One rename each, both files written in full first: a full disk changes neither (core/files.py)."""
        files: list[tuple[Path, str | bytes]] = [(self.path, slim(results).model_dump_json(indent=2) + "\n")]
        if history is not None:
            files.append((self.history_path, history.data))
        replace_together(files)
        return str(self.path)

    def read_history(self) -> RawHistory:
        path, label, legacy = self.history_path, self.history_label, False
        if not path.exists():
            if not self.legacy_path.exists():
                return RawHistory(label)
            path, label, legacy = self.legacy_path, self.legacy_label, True
        if (size := path.stat().st_size) > MAX_FILE_BYTES:  # not the store failing to answer: re-running won't help
            too_large = f"it is {size} bytes, over the {MAX_FILE_BYTES} byte limit of a file read"
            fix = "move it aside to start a new history, and lower history.max_records so that it stays smaller"
            return RawHistory(label, error=too_large, fix=fix, legacy=legacy)
        try:
            return RawHistory(label, read_bytes(path, "history file"), legacy=legacy)
        except InputError as exc:
            return RawHistory(label, error=exc.problem, legacy=legacy)


class NoStore:
    def load(self) -> LoadOutcome:
        return LoadOutcome(None, ["no baseline store configured (baseline.store: none)"])

    def save(self, results: ResultsFile, history: PendingHistory | None = None) -> str:
        return "nowhere (baseline.store: none)"

    def read_history(self) -> RawHistory:
        return RawHistory("nowhere (baseline.store: none)")
