"""The gate's decision: which verdicts and statuses fail the check, and what can accept a failing gate with a
visible note: an `/eval accept` bound to the commit judged (checked by the caller), else the override label.

`decide` is a pure function of the comparison and the policy: it returns a `Decision` naming every verdict that
fails the gate (`gating`) and, for a regression reported but not gating, why not (`not_gating`), so the comment
never shows a regression the headline does not account for. It edits nothing it judges; `gate/wording.py` makes
the sentences.
"""

from __future__ import annotations

from collections.abc import Iterable

from adk_eval_gate.baseline.comparison_format import EfficiencyRow, Override, PooledSummary, Row, Summary
from adk_eval_gate.baseline.decision_records import FailureKind, Subject
from adk_eval_gate.baseline.efficiency_compare import CONDITIONS
from adk_eval_gate.baseline.row_notes import EfficiencyNote, Settle
from adk_eval_gate.config.workflow_settings import GateSettings
from adk_eval_gate.gate.outcome import (
    ComparedVerdicts,
    Decision,
    Failure,
    LookedAt,
    NotGating,
    subject_of,
)
from adk_eval_gate.gate.pass_k_gate import pass_k_failures
from adk_eval_gate.results.results_format import ResultsFile

Verdicted = Row | Summary | PooledSummary
CaseKey4 = tuple[str, str, str, str]


def _verdict_failures(comparison: ComparedVerdicts, fail_on: set[str], unconfirmed_fails: bool) -> list[Failure]:
    groups: list[Summary | PooledSummary] = [*comparison.pooled, *comparison.summaries]

    def failing(kind: FailureKind, items: Iterable[Verdicted]) -> list[Failure]:
        return [Failure(kind=kind, subject=subject_of(item)) for item in items]

    found: list[Failure] = []
    if "regression" in fail_on:
        found += failing("regression", (s for s in groups if s.verdict == "regressed"))
    if "case_regression" in fail_on:
        found += failing(
            "case_regression", (r for r in comparison.rows if r.verdict == "regressed" and not r.quarantined)
        )
    if "regression" in fail_on and unconfirmed_fails:
        found += failing("unconfirmed", (s for s in groups if s.unconfirmed))
    if "inconclusive" in fail_on:
        found += failing("inconclusive", (s for s in groups if s.verdict == "inconclusive"))
    if "not_comparable" in fail_on:
        found += failing("not_comparable", (r for r in comparison.rows if r.verdict == "not_comparable"))
    return found


def _status_failures(
    results: ResultsFile, settings: GateSettings, comparison: ComparedVerdicts, quarantined: frozenset[CaseKey4]
) -> list[Failure]:
    fail_on = set(settings.fail_on)
    cases = [(s, c) for s in results.eval_sets for c in s.cases]

    def case(
        kind: FailureKind, agent: str, eval_set: str, eval_id: str, detail: str | None, name: str | None = None
    ) -> Failure:
        subject = Subject(scope="case", agent=agent, eval_set_id=eval_set, eval_id=eval_id, criterion=name)
        return Failure(kind=kind, subject=subject, detail=detail)

    found: list[Failure] = []
    if "threshold" in fail_on:
        found += [
            case("below_threshold", s.agent, s.eval_set_id, c.eval_id, c.reason)
            for s, c in cases
            if c.status == "failed"
            and not all(
                (s.agent, s.eval_set_id, c.eval_id, name) in quarantined
                for name, m in c.metrics.items()
                if m.status == "failed"
            )
        ]
    if "error" in fail_on:
        if comparison.baseline_error:
            found.append(Failure(kind="baseline_error", detail=comparison.baseline_error))
        found += [case("error", s.agent, s.eval_set_id, c.eval_id, c.reason) for s, c in cases if c.status == "error"]
        # a case the spending limit left out was not evaluated because the run could not afford it: fail closed
        found += [
            case("not_run", s.agent, s.eval_set_id, c.eval_id, c.reason) for s, c in cases if c.status == "not_run"
        ]
    if "not_evaluated" in fail_on:
        found += [
            case("not_evaluated", s.agent, s.eval_set_id, c.eval_id, m.reason, name)
            for s, c in cases
            for name, m in c.metrics.items()
            if m.status == "not_evaluated"
        ]
    if "no_baseline" in fail_on and not comparison.has_baseline:
        found.append(Failure(kind="no_baseline"))
    if settings.min_pass_rate is not None and cases:
        rate = sum(c.status == "passed" for _, c in cases) / len(cases)
        if rate < settings.min_pass_rate:
            found.append(Failure(kind="pass_rate", rate=rate, minimum=settings.min_pass_rate))
    return found


def _history_failures(comparison: ComparedVerdicts, fail_on: set[str]) -> tuple[list[Failure], list[NotGating]]:
    """Drift verdicts that gate; and a history that could not be used, which fails closed: the drift it should
    have shown cannot be told from none (said once when the store failed for the baseline too)."""
    history = comparison.history
    if history is None:
        return [], []
    found: list[Failure] = []
    already = comparison.baseline_error is not None and "error" in fail_on
    if history.error and fail_on & {"drift", "error"} and not already:
        found.append(Failure(kind="history", detail=history.error))
    regressed = [subject_of(row) for row in history.drift if row.verdict == "regressed"]
    if "drift" in fail_on:
        return found + [Failure(kind="drift", subject=s) for s in regressed], []
    return found, [NotGating(kind="lacks_condition", subject=s, condition="drift") for s in regressed]


def efficiency_unconfirmed(comparison: ComparedVerdicts, fail_on: set[str]) -> list[EfficiencyRow]:
    """The usage rises beyond tolerance that these samples could never confirm, of a metric whose condition gates."""
    return [
        row
        for row in comparison.efficiency
        if row.verdict == "inconclusive"
        and isinstance(row.note, EfficiencyNote)
        and row.note.unconfirmed
        and CONDITIONS[row.metric] in fail_on
    ]


def _efficiency_failures(
    comparison: ComparedVerdicts, fail_on: set[str], unconfirmed_fails: bool = True
) -> tuple[list[Failure], list[NotGating]]:
    found: list[Failure] = []
    notes: list[NotGating] = []
    if unconfirmed_fails:
        found += [
            Failure(kind="unconfirmed", subject=subject_of(row), condition=CONDITIONS[row.metric])
            for row in efficiency_unconfirmed(comparison, fail_on)
        ]
    for row in comparison.efficiency:
        if row.verdict != "regressed":
            continue
        condition = CONDITIONS[row.metric]
        if condition in fail_on:
            found.append(Failure(kind="efficiency", subject=subject_of(row), condition=condition))
        else:
            notes.append(NotGating(kind="lacks_condition", subject=subject_of(row), condition=condition))
    return found, notes


def _not_gating(comparison: ComparedVerdicts, gating: frozenset[Subject], fail_on: set[str]) -> list[NotGating]:
    """Why each regression that does not fail the gate is reported anyway, and each quarantined case row."""
    groups: list[Summary | PooledSummary] = [*comparison.pooled, *comparison.summaries]
    notes = [
        NotGating(kind="lacks_condition", subject=subject_of(item), condition="regression")
        for item in groups
        if item.verdict == "regressed" and subject_of(item) not in gating
    ]
    failing_sets = {
        (s.agent, s.eval_set_id, s.criterion)
        for s in comparison.summaries
        if s.verdict == "regressed" and subject_of(s) in gating
    }
    failing_pooled = {
        (p.agent, p.criterion) for p in comparison.pooled if p.verdict == "regressed" and subject_of(p) in gating
    }
    for row in comparison.rows:
        subject = subject_of(row)
        if row.quarantined:
            notes.append(NotGating(kind="quarantined", subject=subject))
        elif row.verdict != "regressed" or subject in gating:
            continue
        elif (row.agent, row.eval_set_id, row.criterion) in failing_sets or (
            row.agent,
            row.criterion,
        ) in failing_pooled:
            notes.append(NotGating(kind="behind_failing_group", subject=subject))
        else:
            lacking = "case_regression" if "case_regression" not in fail_on else None
            notes.append(NotGating(kind="case_alone", subject=subject, condition=lacking))
    return notes


def _looked_at(comparison: ComparedVerdicts, fail_on: set[str]) -> LookedAt:
    history = comparison.history
    drift_gates = history is not None and bool(history.drift) and "drift" in fail_on
    return LookedAt(
        eval_sets_compared=sum(s.cases_compared > 0 for s in comparison.summaries),
        pooled=len(comparison.pooled),
        drift_tests=len(history.drift) if history is not None and drift_gates else 0,
        merges=history.merges if history is not None and drift_gates else None,
        regressions_not_gating=sum(s.verdict == "regressed" for s in [*comparison.pooled, *comparison.summaries]),
    )


def decide(
    comparison: ComparedVerdicts,
    results: ResultsFile,
    settings: GateSettings,
    *,
    labels: Iterable[str] = (),
    acceptance: Override | None = None,
    settle: Settle | None = None,
) -> Decision:
    """`acceptance`: an `/eval accept` for the commit these results are of (the caller matched the commit);
    `settle`: what would settle the unconfirmed drops (baseline/power_report.py), for the headline."""
    fail_on: set[str] = set(settings.fail_on)
    quarantined = frozenset((r.agent, r.eval_set_id, r.eval_id, r.criterion) for r in comparison.rows if r.quarantined)
    verdicts = _verdict_failures(comparison, fail_on, settings.unconfirmed == "fail")
    efficiency, efficiency_notes = _efficiency_failures(comparison, fail_on, settings.unconfirmed == "fail")
    history, history_notes = _history_failures(comparison, fail_on)
    failures = verdicts + efficiency + _status_failures(results, settings, comparison, quarantined) + history
    failures += pass_k_failures(comparison.pass_k)
    gating = frozenset(f.subject for f in [*verdicts, *efficiency, *history] if f.subject is not None)
    unconfirmed = (
        sum(s.unconfirmed for s in [*comparison.pooled, *comparison.summaries]) if "regression" in fail_on else 0
    ) + len(efficiency_unconfirmed(comparison, fail_on))
    override = None
    if failures and acceptance is not None:
        override = acceptance
    elif failures and settings.override_label and settings.override_label in set(labels):
        override = Override(kind="label", label=settings.override_label)
    return Decision(
        verdict="fail" if failures and override is None else "pass",
        fail_on=tuple(settings.fail_on),
        has_baseline=comparison.has_baseline,
        failures=tuple(failures),
        gating=gating,
        not_gating=(*efficiency_notes, *_not_gating(comparison, gating, fail_on), *history_notes),
        override=override,
        unconfirmed=unconfirmed,
        settle=settle if unconfirmed else None,
        looked_at=_looked_at(comparison, fail_on),
    )


def name_who_labelled(decision: Decision, login: str, at: str) -> Decision:
    """The label's override, completed with who added the label and when (the issue's timeline says): a new
    decision; the sentence that names them is the report's."""
    override = decision.override
    if override is None or override.kind != "label" or not decision.failures:
        return decision
    return decision.model_copy(update={"override": override.model_copy(update={"by": login, "at": at})})
