"""The gate's notes as the sentences people read: the headline reason, one line per failing condition, the clause a
regression that does not gate carries, and the note of an override. Nowhere else does the gate's decision become
prose; the comparison file (comparison.json) stores these sentences as its `reason` and `failures` fields, and
every compared row's reason, made from the row's note by `report/reasons.py`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TypeVar, cast

from adk_eval_gate.baseline.history import HistoryState
from adk_eval_gate.baseline.models import Comparison, GateDecision, Override
from adk_eval_gate.baseline.stores import LoadOutcome
from adk_eval_gate.config.models import GateSettings
from adk_eval_gate.core.clip import short_sha
from adk_eval_gate.gate.decision import GatedComparison, gate_comparison
from adk_eval_gate.gate.outcome import Compared, Decision, Failure, NotGating, Subject, subject_of
from adk_eval_gate.report.plain import cases_of, row_divergence, what_changed
from adk_eval_gate.report.reasons import reason, settle_text
from adk_eval_gate.results.models import ResultsFile

_VERDICT_KINDS = {
    "regression": "regression",
    "case_regression": "case regression",
    "unconfirmed": "unconfirmed",
    "inconclusive": "inconclusive",
    "not_comparable": "not comparable",
}
_CASE_KINDS = {"below_threshold": "below threshold", "error": "error", "not_run": "not run"}


def where(subject: Subject) -> str:
    """`agent/eval set case criterion`, or `agent (all N eval sets) criterion` for a pooled verdict."""
    if subject.scope == "pooled":
        return f"{subject.agent} (all {subject.eval_sets} eval sets) {subject.criterion}"
    case = f" {subject.eval_id}" if subject.scope == "case" else ""
    return f"{subject.agent}/{subject.eval_set_id}{case} {subject.criterion}"


def failure_line(
    failure: Failure, reason_of: Mapping[Subject, str], plain_of: Mapping[Subject, str] | None = None
) -> str:
    """One failing condition, `kind: detail`; a compared verdict's quotes that verdict's reason, after what changed
    for the user in plain words (`plain_of`: report/plain.py) when it is known."""
    subject, kind = failure.subject, failure.kind
    if kind in _VERDICT_KINDS and subject is not None:
        plain = (plain_of or {}).get(subject)
        if plain:
            return f"{_VERDICT_KINDS[kind]}: {where(subject)}: {plain}; {reason_of[subject]}"
        return f"{_VERDICT_KINDS[kind]}: {where(subject)} {reason_of[subject]}"
    if kind == "efficiency" and subject is not None:
        condition = (failure.condition or "").replace("_", " ")
        return f"{condition}: {subject.agent}/{subject.eval_set_id} {subject.criterion} {reason_of[subject]}"
    if kind == "drift" and subject is not None:
        return f"drift: {subject.agent} {subject.criterion} {reason_of[subject]}"
    if kind in _CASE_KINDS and subject is not None:
        return f"{_CASE_KINDS[kind]}: {subject.agent}/{subject.eval_set_id} {subject.eval_id}: {failure.detail}"
    if kind == "not_evaluated" and subject is not None:
        return (
            f"not evaluated: {subject.agent}/{subject.eval_set_id} {subject.eval_id} {subject.criterion}: "
            f"{failure.detail}"
        )
    if kind == "baseline_error":
        return f"error: the baseline could not be loaded, so no regression could be seen: {failure.detail}"
    if kind == "no_baseline":
        return "no baseline: there was no baseline to compare with"
    if kind == "pass_k":
        return f"pass^k: {failure.detail}"
    if kind == "pass_rate":
        return f"pass rate {failure.rate or 0.0:.1%} is below the minimum {failure.minimum or 0.0:.0%}"
    return f"history: {failure.detail}"


def not_gating_clause(note: NotGating) -> str:
    """What a reported regression that does not gate adds to its reason, `; …`."""
    if note.kind == "quarantined":
        return "; quarantined: known flaky on the default branch (gate.quarantine), reported, not gating"
    if note.kind == "behind_failing_group":
        return "; behind a failing eval-set or pooled verdict"
    if note.kind == "case_alone":
        why = f"gate.fail_on lacks {note.condition}" if note.condition else "not a gating condition"
        return f"; significant for this case alone, not gating ({why})"
    return f"; reported, not gating (gate.fail_on lacks {note.condition})"


def accepted_by(override: Override) -> str:
    """`accepted by @login for commit abc: reason`, or the label, with who added it and when once that is known."""
    if override.kind == "comment":
        return f"accepted by @{override.by} for commit {short_sha(override.sha)}: {override.reason}"
    who = f" (added by @{override.by} at {override.at})" if override.by and override.at else ""
    return f"accepted by the '{override.label}' label{who}"


def headline(decision: Decision, failures: list[str]) -> str:
    """The gate's one-line reason: what failed it (and what accepted that), or what it found nothing wrong in."""
    if failures:
        summary = f"{len(failures)} failing condition(s); first: {failures[0]}"
        return f"{accepted_by(decision.override)} despite {summary}" if decision.override else summary
    if not decision.has_baseline:
        reason = "no baseline yet: every case is new; the gate's conditions hold"
    else:
        seen = decision.looked_at
        scope = f"{seen.eval_sets_compared} eval-set comparison(s)" + (
            f" and {seen.pooled} pooled over eval sets" if seen.pooled else ""
        )
        if seen.drift_tests:
            scope += f" and {seen.drift_tests} drift test(s) over {seen.merges} merge(s)"
        reason = f"no failing condition ({', '.join(decision.fail_on) or 'none'}) in {scope}"
        if seen.regressions_not_gating:
            reason += f"; {seen.regressions_not_gating} regression(s) reported but not gating"
    if decision.unconfirmed:
        settled = settle_text(decision.settle) if decision.settle else None
        # warn mode: the check passes, but the reason never reads as a clean pass
        return f"{decision.unconfirmed} drop(s) unconfirmed, not gating (gate.unconfirmed: warn): {settled}; {reason}"
    return reason


def gate_decision(
    decision: Decision, reason_of: Mapping[Subject, str], plain_of: Mapping[Subject, str] | None = None
) -> GateDecision:
    """The decision as the comparison file stores it."""
    failures = [failure_line(f, reason_of, plain_of) for f in decision.failures]
    return GateDecision(
        verdict=decision.verdict,
        reason=headline(decision, failures),
        failures=failures,
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
    lower on a trajectory criterion leads with where its calls first departed (report/plain.py)."""
    compared, decision = gated.compared, gated.decision
    cases = cases_of(current)
    drift = compared.history.drift if compared.history else []
    every: list[Compared] = [*compared.pooled, *compared.summaries, *compared.rows, *compared.efficiency, *drift]
    reason_of = {subject_of(row): reason(row) for row in every}
    for row in compared.rows:
        if diverged := row_divergence(row, cases):
            reason_of[subject_of(row)] = f"{diverged}; {reason_of[subject_of(row)]}"
    clause = {note.subject: not_gating_clause(note) for note in decision.not_gating}

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
    """`gate_comparison` rendered: the comparison file as `compare`, `publish` and the reports take it."""
    gated = gate_comparison(
        current, outcome, gate, labels, max_age_days=max_age_days, acceptance=acceptance, history=history
    )
    return comparison_file(gated, current)
