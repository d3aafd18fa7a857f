"""What every baseline store shares: a loaded baseline and its identity, and how a results file is slimmed and
dated before it is stored."""

from __future__ import annotations

import dataclasses
import subprocess
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Protocol

from adk_eval_gate.baseline.comparison_format import BaselineIdentity
from adk_eval_gate.github.context import ActionsContext
from adk_eval_gate.results.results_format import ResultsFile


@dataclass
class LoadedBaseline:
    results: ResultsFile
    identity: BaselineIdentity


@dataclass
class RawHistory:
    """The default branch's history as the store holds it: bytes, parsed and checked by `baseline.history`."""

    source: str  # where it lives, for messages
    data: bytes | None = None  # None: there is no history there yet
    error: str | None = None  # it could not be fetched: never taken for "no history"
    version: str | None = None  # the branch store's blob sha: a write replaces only what was read
    note: str | None = None  # why nothing could be looked for here (outside Actions): not an error, not "none yet"
    fix: str | None = None  # what to do about `error`, when it is not "re-run when the store answers"
    legacy: bool = False  # an earlier version's history.json (no history.db there yet): the write creates the db


@dataclass(frozen=True)
class PendingHistory:
    """The history a baseline is stored with (its new record appended): a store saves the two together or
    neither, so that a pull request never finds a baseline whose run the history lacks, or the reverse."""

    data: bytes  # the history database (baseline/history/database.py)
    read: RawHistory  # what was read: the write replaces exactly that


@dataclass
class LoadOutcome:
    baseline: LoadedBaseline | None
    warnings: list[str] = field(default_factory=list)
    # Set when the store broke (API failure, no permission, unreadable data) rather than found nothing: the gate
    # fails closed on it under `error`, since a regression could hide behind it.
    error: str | None = None
    history: RawHistory | None = None  # read with the baseline when the store keeps the two together


class BaselineStore(Protocol):
    def load(self) -> LoadOutcome: ...

    def save(self, results: ResultsFile, history: PendingHistory | None = None) -> str:
        """The baseline and, when given, its history, both or neither; what was stored, in words."""
        ...

    def read_history(self) -> RawHistory: ...


def slim(results: ResultsFile) -> ResultsFile:
    """Scores and identities only: the agent's outputs are large and belong to the run that produced them."""
    copy = results.model_copy(deep=True)
    for eval_set in copy.eval_sets:
        for case in eval_set.cases:
            for run in case.runs:
                run.actual_invocations = None
    return copy


def age_days(created_at: str | None, now: datetime | None = None) -> float | None:
    if not created_at:
        return None
    try:
        created = datetime.fromisoformat(created_at.replace("Z", "+00:00"))
    except ValueError:
        return None
    if created.tzinfo is None:
        created = created.replace(tzinfo=timezone.utc)
    return max(0.0, ((now or datetime.now(timezone.utc)) - created).total_seconds() / 86400)


def identity_of(results: ResultsFile, source: str, *, exact_base: bool = True) -> BaselineIdentity:
    return BaselineIdentity(
        source=source,
        sha=results.git.sha,
        created_at=results.timings.finished_at,
        age_days=age_days(results.timings.finished_at),
        tool_version=results.tool.version,
        exact_base=exact_base,
    )


def merge_base_candidates(context: ActionsContext, directory: Path) -> list[str]:
    """The PR's merge-base first (from git when the history is there), then the PR's recorded base sha."""
    found = list(context.merge_base) if context.merge_base is not None else _git_merge_base(context, directory)
    if context.base_sha and context.base_sha not in found:
        found.append(context.base_sha)
    return found


def merge_base_found(context: ActionsContext, directory: Path) -> ActionsContext:
    """The context with the merge-base git names now: called before any of the pull request's code runs, so what
    it does to the checkout's .git afterwards cannot choose the baseline."""
    return dataclasses.replace(context, merge_base=tuple(_git_merge_base(context, directory)))


def _git_merge_base(context: ActionsContext, directory: Path) -> list[str]:
    candidates: list[str] = []
    if context.base_branch:
        for ref in (f"origin/{context.base_branch}", context.base_branch):
            try:
                done = subprocess.run(
                    ["git", "merge-base", "HEAD", ref], cwd=directory, capture_output=True, text=True, timeout=20
                )
            except (OSError, subprocess.SubprocessError):
                break
            if done.returncode == 0 and done.stdout.strip():
                candidates.append(done.stdout.strip())
                break
    return candidates
