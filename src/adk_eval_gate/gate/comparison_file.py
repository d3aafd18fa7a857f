"""The comparison file (comparison.json) from the gate's decision: every verdict that fails the gate flagged
`gating`, every compared row's reason (made from its note by `gate/reasons.py`) with, for a regression that does
not gate, the clause that says why; and the decision itself, each failing condition and each note as data
(`kind`, `subject`, `figures`) with its sentence (`gate/wording.py`) beside it. The report layer only renders it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TypeVar, cast

from adk_eval_gate.baseline.comparison_format import Comparison, GateDecision, Override
from adk_eval_gate.baseline.decision_records import FailureRecord, Figures, NoteRecord, Subject
from adk_eval_gate.baseline.history import HistoryState
from adk_eval_gate.baseline.stores import LoadOutcome
from adk_eval_gate.config.workflow_settings import GateSettings
from adk_eval_gate.gate.decision import GatedComparison, gate_comparison
from adk_eval_gate.gate.outcome import Compared, Decision, Failure, NotGating, subject_of
from adk_eval_gate.gate.plain import cases_of, row_divergence, what_changed
from adk_eval_gate.gate.reasons import reason, settle_text
from adk_eval_gate.gate.wording import failure_body, failure_line, headline, not_gating_text
from adk_eval_gate.results.results_format import ResultsFile


def failure_record(
    failure: Failure, reason_of: Mapping[Subject, str], plain_of: Mapping[Subject, str] | None = None
) -> FailureRecord:
    """One failing condition as the file stores it: the data, and the line people read."""
    figures = Figures(detail=failure.detail, condition=failure.condition, rate=failure.rate, minimum=failure.minimum)
    text = failure_line(failure, failure_body(failure, reason_of, plain_of))
    return FailureRecord(kind=failure.kind, subject=failure.subject, figures=figures, text=text)


def note_record(note: NotGating) -> NoteRecord:
    return NoteRecord(
        kind=note.kind, subject=note.subject, figures=Figures(condition=note.condition), text=not_gating_text(note)
    )


def gate_decision(
    decision: Decision, reason_of: Mapping[Subject, str], plain_of: Mapping[Subject, str] | None = None
) -> GateDecision:
    """The decision as the comparison file stores it."""
    failures = [failure_record(f, reason_of, plain_of) for f in decision.failures]
    return GateDecision(
        verdict=decision.verdict,
        reason=headline(decision, [f.text for f in failures]),
        failures=failures,
        notes=[note_record(note) for note in decision.not_gating],
        overridden=decision.overridden,
        override=decision.override,
        fail_on=list(decision.fail_on),
        unconfirmed=decision.unconfirmed,
        settle=settle_text(decision.settle) if decision.settle else None,
    )


_Row = TypeVar("_Row", bound=Compared)


def comparison_file(gated: GatedComparison, current: ResultsFile | None = None) -> Comparison:
    """The comparison with the gate's notes in its sentences: every verdict that fails the gate flagged `gating`,
    every reported regression that does not gate saying why; with the `current` run's results, a case that scored
    lower on a trajectory criterion leads with where its calls first departed (gate/plain.py)."""
    compared, decision = gated.compared, gated.decision
    cases = cases_of(current)
    drift = compared.history.drift if compared.history else []
    every: list[Compared] = [*compared.pooled, *compared.summaries, *compared.rows, *compared.efficiency, *drift]
    reason_of = {subject_of(row): reason(row) for row in every}
    for row in compared.rows:
        if diverged := row_divergence(row, cases):
            reason_of[subject_of(row)] = f"{diverged}; {reason_of[subject_of(row)]}"
    clause = {note.subject: f"; {not_gating_text(note)}" for note in decision.not_gating}

    def told(rows: Iterable[_Row]) -> list[_Row]:
        return [_told(row, reason_of[subject_of(row)], decision.gating, clause) for row in rows]

    efficiency = told(compared.efficiency)
    efficiency.sort(key=lambda e: (e.verdict != "regressed", not e.gating, e.verdict != "improved", -abs(e.change)))
    history = compared.history.model_copy(update={"drift": told(drift)}) if compared.history else None
    return Comparison(
        verdict=decision.verdict,
        baseline=gated.baseline,
        warnings=list(gated.warnings),
        gate=gate_decision(
            decision, reason_of, what_changed([*compared.pooled, *compared.summaries], compared.rows, current)
        ),
        pooled=told(compared.pooled),
        summaries=told(compared.summaries),
        rows=told(compared.rows),
        efficiency=efficiency,
        history=history,
        power=list(gated.power),
        pass_k=list(compared.pass_k),
        changed=gated.changed,
    )


def _told(row: _Row, said: str, gating: frozenset[Subject], clause: Mapping[Subject, str]) -> _Row:
    subject = subject_of(row)
    told = row.model_copy(update={"gating": subject in gating, "reason": said + clause.get(subject, "")})
    return cast(_Row, told)  # model_copy keeps the row's class; mypy sees only the bound


def build_comparison(
    current: ResultsFile,
    outcome: LoadOutcome,
    gate: GateSettings,
    labels: Iterable[str] = (),
    *,
    max_age_days: float | None = None,
    acceptance: Override | None = None,
    history: HistoryState | None = None,
) -> Comparison:
    """`gate_comparison` written down: the comparison file as `compare`, `publish` and the reports take it."""
    gated = gate_comparison(
        current, outcome, gate, labels, max_age_days=max_age_days, acceptance=acceptance, history=history
    )
    return comparison_file(gated, current)
