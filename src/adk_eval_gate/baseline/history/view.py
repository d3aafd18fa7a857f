"""What the history adds to one comparison: the drift tests, the known flaky cases (and which are quarantined), and
the trends, all seen from the pull request's base record."""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from adk_eval_gate.baseline.compare import samples
from adk_eval_gate.baseline.comparison_format import FlakyCase, HistoryReport, Trend
from adk_eval_gate.baseline.history.drift import Pending, drift_rows
from adk_eval_gate.baseline.history.io import HistoryError, HistoryState
from adk_eval_gate.baseline.history.lookup import CaseKey, index, specs_of_record, specs_of_results
from adk_eval_gate.baseline.history.provenance_marks import drift_comparable
from adk_eval_gate.baseline.history.record_format import HistoryRecord
from adk_eval_gate.baseline.history.slide import with_starts
from adk_eval_gate.baseline.history.stability import Known, known_cases, quarantinable
from adk_eval_gate.baseline.history.trend import series
from adk_eval_gate.config.workflow_settings import GateSettings
from adk_eval_gate.core.clip import clip, short_sha
from adk_eval_gate.results.results_format import ResultsFile


@dataclass
class HistoryView:
    report: HistoryReport
    drift: list[Pending] = field(default_factory=list)
    known: dict[CaseKey, Known] = field(default_factory=dict)
    quarantined: frozenset[CaseKey] = frozenset()


def _read(state: HistoryState, indices: Iterable[int]) -> dict[int, HistoryRecord]:
    """The records at these positions with their cases; a case row that is not one of ours (only now read, as a
    window reads it) makes the history unusable, as an unreadable file does."""
    if state.history is None:
        return {}
    try:
        return state.history.full(indices)
    except ValueError as exc:
        raise HistoryError(state.source, str(exc)) from None


def _base_index(records: Sequence[HistoryRecord], base_sha: str | None, notes: list[str]) -> int:
    if base_sha:
        for i in range(len(records) - 1, -1, -1):
            if records[i].sha == base_sha:
                return i
        notes.append(f"the base commit {short_sha(base_sha)} has no history record; the newest record stands for it")
    return len(records) - 1


def _reference(records: Sequence[HistoryRecord], base: int, gate: GateSettings, report: HistoryReport) -> int | None:
    pinned = gate.drift.reference
    if pinned is not None:
        found = next((i for i in range(base, -1, -1) if records[i].sha.startswith(pinned)), None)
        if found is None:
            report.error = (
                f"gate.drift.reference {pinned} is not in the history up to the base ({base + 1} record(s) from "
                f"{short_sha(records[0].sha)} on); pin a commit the history still holds, or unset it to use the window"
            )
        return found
    if base == 0:
        report.notes.append("drift: the history holds no record before the base yet; nothing to compare with")
        return None
    return max(0, base - gate.drift.window)


def _since(records: Sequence[HistoryRecord], ref: int, base: int, gate: GateSettings) -> str:
    record = records[ref]
    how = (
        "the pinned gate.drift.reference"
        if gate.drift.reference
        else f"gate.drift.window {gate.drift.window}" + (", the oldest record" if base - gate.drift.window < 0 else "")
    )
    return f"{short_sha(record.sha)} ({clip(record.date, 10, marker='')}, {base - ref} merge(s) back; {how})"


def _trends(records: Sequence[HistoryRecord], current: ResultsFile, count: int) -> list[Trend]:
    keys = list(dict.fromkeys((s.agent, name) for s in current.eval_sets for name in s.criteria))
    trends = series(records, count, keys)
    for trend in trends:
        now = [
            statistics.fmean(samples(c.metrics[trend.criterion]))
            for s in current.eval_sets
            if s.agent == trend.agent
            for c in s.cases
            if trend.criterion in c.metrics and samples(c.metrics[trend.criterion])
        ]
        trend.current = statistics.fmean(now) if now else None
    return trends


def flaky_cases(known: dict[CaseKey, Known], quarantined: frozenset[CaseKey]) -> list[FlakyCase]:
    cases = [
        FlakyCase(
            agent=key[0],
            eval_set_id=key[1],
            eval_id=key[2],
            criterion=key[3],
            stability=k.stability,
            passes=k.passes,
            samples=k.samples,
            records=k.records,
            quarantined=key in quarantined,
        )
        for key, k in known.items()
        if k.stability != "stable"
    ]
    return sorted(cases, key=lambda c: (c.stability != "flaky", c.agent, c.eval_set_id, c.eval_id, c.criterion))


def history_view(state: HistoryState, current: ResultsFile, gate: GateSettings, base_sha: str | None) -> HistoryView:
    history = state.history
    report = HistoryReport(
        source=state.source,
        records=len(history.records) if history else 0,
        error=state.error,
        notes=list(state.notes),
    )
    view = HistoryView(report)
    if state.error is not None or history is None or not history.records:
        return view
    records = history.records  # summaries only: the cases of the records the window spans are read below
    base = _base_index(records, base_sha, report.notes)
    upto = records[: base + 1]
    flaky_from = max(0, base + 1 - state.settings.flaky.records)
    ref = _reference(records, base, gate, report)
    try:
        full = _read(state, [*range(flaky_from, base + 1), *([ref] if ref is not None else [])])
    except HistoryError as exc:
        report.error = str(exc)  # fails the gate closed, as a history that cannot be read at all does
        return view
    window = [full[i] for i in range(flaky_from, base + 1)]
    view.known = known_cases(window, specs_of_results(current), state.settings.flaky)
    if gate.quarantine == "flaky":
        view.quarantined = frozenset(k for k, v in view.known.items() if quarantinable(v, state.settings.flaky))
    report.flaky = flaky_cases(view.known, view.quarantined)
    report.trends = _trends(upto, current, state.settings.trend)
    if ref is None:
        return view
    report.reference_sha, report.reference_date, report.merges = records[ref].sha, records[ref].date, base - ref
    report.since = _since(records, ref, base, gate)
    comparable, left_out = drift_comparable(current, full[ref])  # never a drift across judges or scorers
    report.notes += left_out
    pending = drift_rows(comparable, index(full[ref]), gate.tolerance_for, view.quarantined)
    view.drift = with_starts(pending, records[ref : base + 1])
    report.drift = [row for row, _, _ in view.drift]
    return view


def history_summary(state: HistoryState, gate: GateSettings) -> HistoryReport:
    """The history seen from its newest record, for `history show`: what the next pull request will be held to.
    `HistoryError` when a record it reads is not one of ours."""
    history = state.history
    report = HistoryReport(source=state.source, records=len(history.records) if history else 0, notes=list(state.notes))
    if history is None or not history.records:
        return report
    records = history.records
    newest = len(records) - 1
    full = _read(state, range(max(0, newest + 1 - state.settings.flaky.records), newest + 1))
    window = [full[i] for i in sorted(full)]
    known = known_cases(window, specs_of_record(window[-1]), state.settings.flaky)
    quarantined = frozenset(
        k for k, v in known.items() if gate.quarantine == "flaky" and quarantinable(v, state.settings.flaky)
    )
    report.flaky = flaky_cases(known, quarantined)
    report.trends = series(records, state.settings.trend)
    base = len(records) - 1
    ref = _reference(records, base, gate, report)
    if ref is not None:
        report.reference_sha, report.reference_date, report.merges = records[ref].sha, records[ref].date, base - ref
        report.since = _since(records, ref, base, gate)
    return report
