"""The store step of a default-branch run: the baseline and its history record written together (a whole-suite run
only), or neither. It writes — the output folder and the baseline store — and says what it did."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from adk_eval_gate.baseline.history import CARRIED_FILE_NAME as HISTORY_FILE
from adk_eval_gate.baseline.history import HistoryState, next_history
from adk_eval_gate.baseline.stores import BaselineStore
from adk_eval_gate.core.files import write_bytes_atomic
from adk_eval_gate.github.client import GitHubError
from adk_eval_gate.github.workflow_commands import error
from adk_eval_gate.results.results_format import ResultsFile
from adk_eval_gate.run.plan import Plan
from adk_eval_gate.run.shards import why_not_a_baseline


@dataclass(frozen=True)
class Stored:
    note: str = ""  # a line for the log: what was stored, or why not
    lost: bool = False  # the baseline should have been stored and was not: the job fails


def store_baseline_and_history(
    out: Path,
    plan: Plan,
    store: BaselineStore,
    results: ResultsFile,
    history: HistoryState | None,
    *,
    partial: bool,
) -> Stored:
    """`partial`: a `--cases` run, never the whole suite's baseline. Losing them fails the job: every later pull
    request would compare with an older baseline, or go without the drift gate and the known flaky cases."""
    artifact = plan.workflow.settings.baseline.store == "artifact"
    if history is not None and history.error is not None:
        withdrawn = withdraw_results(out / "results.json") if artifact else ""
        error(
            "neither the baseline nor the history was stored, since the history cannot advance: "
            + "; ".join(filter(None, (history.error, withdrawn)))
        )
        return Stored("the baseline and the history were NOT stored", lost=True)
    why = "--cases ran only part of the suite" if partial else why_not_a_baseline(results, plan)
    step = next_history(history, results, whole_suite=why is None)
    if step.carried is not None:
        # Before the store: a full disk here stores nothing. The artifact store's upload carries it from here.
        write_bytes_atomic(out / HISTORY_FILE, step.carried)
    if partial:  # a partial run never replaces the whole suite's baseline
        return Stored(" · ".join(filter(None, (f"baseline not stored: {why}", step.note))))
    if why is not None:
        error(f"the baseline was not stored, so pull requests keep comparing with an older one: {why}")
        return Stored("the baseline was NOT stored", lost=True)
    try:
        where = store.save(results, step.pending)
    except GitHubError as exc:
        if step.carried is not None:
            (out / HISTORY_FILE).unlink(missing_ok=True)  # the folder carries no history the store lacks
        error(f"neither the baseline nor the history was stored, so pull requests keep an older one: {exc}")
        return Stored("the baseline was NOT stored", lost=True)
    return Stored(" · ".join(filter(None, (f"baseline stored: {where}", step.note))))


def withdraw_results(results: Path) -> str:
    """results.json renamed out of the artifact store's sight (it takes *.json files), kept for whoever looks."""
    aside = results.with_name(results.name + ".unrecorded")
    try:
        os.replace(results, aside)
    except FileNotFoundError:
        return ""
    except OSError as exc:
        return f"{results} could not be moved aside ({exc.strerror or exc}): delete it before the upload step"
    return f"{results} was moved to {aside.name}, so that the artifact carries no baseline without its history"
