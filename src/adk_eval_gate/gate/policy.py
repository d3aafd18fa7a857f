"""The gate's decision: which verdicts and statuses fail the check, and what can accept a failing gate with a
visible note: an `/eval accept` bound to the commit judged (checked by the caller), else the override label.

Every verdict that fails the gate is marked `gating`; a regression that is reported but does not gate says why
in its reason, so the comment never shows a regression the headline does not account for.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from adk_eval_gate.baseline.efficiency_compare import CONDITIONS
from adk_eval_gate.baseline.models import (
    EfficiencyRow,
    GateDecision,
    HistoryReport,
    Override,
    PooledSummary,
    Row,
    Summary,
)
from adk_eval_gate.config.models import GateSettings
from adk_eval_gate.results.models import ResultsFile

Verdicted = Row | Summary | PooledSummary


def where(item: Verdicted) -> str:
    if isinstance(item, PooledSummary):
        return f"{item.agent} (all {item.eval_sets_compared} eval sets) {item.criterion}"
    case = f" {item.eval_id}" if isinstance(item, Row) else ""
    return f"{item.agent}/{item.eval_set_id}{case} {item.criterion}"


def _verdict_failures(
    pooled: list[PooledSummary],
    summaries: list[Summary],
    rows: list[Row],
    fail_on: set[str],
    unconfirmed_fails: bool = True,
) -> list[tuple[Verdicted, str]]:
    groups: list[Verdicted] = [*pooled, *summaries]
    found: list[tuple[Verdicted, str]] = []
    if "regression" in fail_on:
        found += [(s, f"regression: {where(s)} {s.reason}") for s in groups if s.verdict == "regressed"]
    if "case_regression" in fail_on:
        found += [
            (r, f"case regression: {where(r)} {r.reason}")
            for r in rows
            if r.verdict == "regressed" and not r.quarantined
        ]
    if "regression" in fail_on and unconfirmed_fails:
        found += [(s, f"unconfirmed: {where(s)} {s.reason}") for s in groups if s.unconfirmed]
    if "inconclusive" in fail_on:
        found += [(s, f"inconclusive: {where(s)} {s.reason}") for s in groups if s.verdict == "inconclusive"]
    if "not_comparable" in fail_on:
        found += [(r, f"not comparable: {where(r)} {r.reason}") for r in rows if r.verdict == "not_comparable"]
    return found


def _status_failures(
    results: ResultsFile,
    settings: GateSettings,
    has_baseline: bool,
    baseline_error: str | None = None,
    quarantined: frozenset[tuple[str, str, str, str]] = frozenset(),
) -> list[str]:
    fail_on = set(settings.fail_on)
    cases = [(s, c) for s in results.eval_sets for c in s.cases]
    found: list[str] = []
    if "threshold" in fail_on:
        found += [
            f"below threshold: {s.agent}/{s.eval_set_id} {c.eval_id}: {c.reason}"
            for s, c in cases
            if c.status == "failed"
            and not all(
                (s.agent, s.eval_set_id, c.eval_id, name) in quarantined
                for name, m in c.metrics.items()
                if m.status == "failed"
            )
        ]
    if "error" in fail_on:
        if baseline_error:
            found.append(f"error: the baseline could not be loaded, so no regression could be seen: {baseline_error}")
        found += [f"error: {s.agent}/{s.eval_set_id} {c.eval_id}: {c.reason}" for s, c in cases if c.status == "error"]
        # a case the spending limit left out was not evaluated because the run could not afford it: fail closed
        found += [
            f"not run: {s.agent}/{s.eval_set_id} {c.eval_id}: {c.reason}" for s, c in cases if c.status == "not_run"
        ]
    if "not_evaluated" in fail_on:
        found += [
            f"not evaluated: {s.agent}/{s.eval_set_id} {c.eval_id} {name}: {m.reason}"
            for s, c in cases
            for name, m in c.metrics.items()
            if m.status == "not_evaluated"
        ]
    if "no_baseline" in fail_on and not has_baseline:
        found.append("no baseline: there was no baseline to compare with")
    if settings.min_pass_rate is not None and cases:
        rate = sum(c.status == "passed" for _, c in cases) / len(cases)
        if rate < settings.min_pass_rate:
            found.append(f"pass rate {rate:.1%} is below the minimum {settings.min_pass_rate:.0%}")
    return found


def _explain_non_gating(
    pooled: list[PooledSummary], summaries: list[Summary], rows: list[Row], fail_on: set[str]
) -> None:
    for item in [*pooled, *summaries]:
        if item.verdict == "regressed" and not item.gating:
            item.reason += "; reported, not gating (gate.fail_on lacks regression)"
    failing_sets = {(s.agent, s.eval_set_id, s.criterion) for s in summaries if s.gating and s.verdict == "regressed"}
    failing_pooled = {(p.agent, p.criterion) for p in pooled if p.gating and p.verdict == "regressed"}
    for row in rows:
        if row.quarantined:
            row.reason += "; quarantined: known flaky on the default branch (gate.quarantine), reported, not gating"
            continue
        if row.verdict != "regressed" or row.gating:
            continue
        if (row.agent, row.eval_set_id, row.criterion) in failing_sets or (row.agent, row.criterion) in failing_pooled:
            row.reason += "; behind a failing eval-set or pooled verdict"
        else:
            why = "gate.fail_on lacks case_regression" if "case_regression" not in fail_on else "not a gating condition"
            row.reason += f"; significant for this case alone, not gating ({why})"


def _history_failures(history: HistoryReport | None, fail_on: set[str], baseline_error: str | None) -> list[str]:
    """Drift verdicts that gate; and a history that could not be used, which fails closed: the drift it should
    have shown cannot be told from none (said once when the store failed for the baseline too)."""
    if history is None:
        return []
    found = []
    already = baseline_error is not None and "error" in fail_on
    if history.error and fail_on & {"drift", "error"} and not already:
        found.append(f"history: {history.error}")
    for row in history.drift:
        if row.verdict != "regressed":
            continue
        if "drift" in fail_on:
            row.gating = True
            found.append(f"drift: {row.agent} {row.criterion} {row.reason}")
        else:
            row.reason += "; reported, not gating (gate.fail_on lacks drift)"
    return found


def _efficiency_failures(efficiency: Sequence[EfficiencyRow], fail_on: set[str]) -> list[str]:
    found = []
    for row in efficiency:
        if row.verdict != "regressed":
            continue
        condition = CONDITIONS[row.metric]
        if condition in fail_on:
            row.gating = True
            found.append(f"{condition.replace('_', ' ')}: {row.agent}/{row.eval_set_id} {row.metric} {row.reason}")
        else:
            row.reason += f"; reported, not gating (gate.fail_on lacks {condition})"
    return found


def decide(
    results: ResultsFile,
    pooled: list[PooledSummary],
    summaries: list[Summary],
    rows: list[Row],
    settings: GateSettings,
    *,
    has_baseline: bool,
    labels: Iterable[str] = (),
    baseline_error: str | None = None,
    efficiency: Sequence[EfficiencyRow] = (),
    acceptance: Override | None = None,
    history: HistoryReport | None = None,
    settle: str | None = None,
) -> GateDecision:
    """`acceptance`: an `/eval accept` for the commit these results are of (the caller matched the commit);
    `settle`: what would settle the unconfirmed drops (baseline/power_report.py), for the headline."""
    unconfirmed = sum(s.unconfirmed for s in [*pooled, *summaries]) if "regression" in settings.fail_on else 0
    decision = _decide(
        results,
        pooled,
        summaries,
        rows,
        settings,
        has_baseline=has_baseline,
        labels=labels,
        baseline_error=baseline_error,
        efficiency=efficiency,
        acceptance=acceptance,
        history=history,
    )
    if unconfirmed:
        decision.unconfirmed, decision.settle = unconfirmed, settle
        if decision.verdict == "pass" and not decision.overridden:
            # warn mode: the check passes, but the reason never reads as a clean pass
            decision.reason = (
                f"{unconfirmed} drop(s) unconfirmed, not gating (gate.unconfirmed: warn): {settle}; {decision.reason}"
            )
    return decision


def _decide(
    results: ResultsFile,
    pooled: list[PooledSummary],
    summaries: list[Summary],
    rows: list[Row],
    settings: GateSettings,
    *,
    has_baseline: bool,
    labels: Iterable[str],
    baseline_error: str | None,
    efficiency: Sequence[EfficiencyRow],
    acceptance: Override | None,
    history: HistoryReport | None,
) -> GateDecision:
    fail_on = set(settings.fail_on)
    quarantined = frozenset((r.agent, r.eval_set_id, r.eval_id, r.criterion) for r in rows if r.quarantined)
    verdict_failures = _verdict_failures(pooled, summaries, rows, fail_on, settings.unconfirmed == "fail")
    for item, _ in verdict_failures:
        item.gating = True
    _explain_non_gating(pooled, summaries, rows, fail_on)
    failures = (
        [line for _, line in verdict_failures]
        + _efficiency_failures(efficiency, fail_on)
        + _status_failures(results, settings, has_baseline, baseline_error, quarantined)
        + _history_failures(history, fail_on, baseline_error)
    )
    if not failures:
        regressions = sum(s.verdict == "regressed" for s in [*pooled, *summaries])
        compared = sum(s.cases_compared > 0 for s in summaries)
        if not has_baseline:
            reason = "no baseline yet: every case is new; the gate's conditions hold"
        else:
            scope = f"{compared} eval-set comparison(s)" + (
                f" and {len(pooled)} pooled over eval sets" if pooled else ""
            )
            if history is not None and history.drift and "drift" in fail_on:
                scope += f" and {len(history.drift)} drift test(s) over {history.merges} merge(s)"
            reason = f"no failing condition ({', '.join(settings.fail_on) or 'none'}) in {scope}"
            if regressions:
                reason += f"; {regressions} regression(s) reported but not gating"
        return GateDecision(verdict="pass", reason=reason, fail_on=list(settings.fail_on))
    summary = f"{len(failures)} failing condition(s); first: {failures[0]}"
    if acceptance is not None:
        return GateDecision(
            verdict="pass",
            failures=failures,
            overridden=True,
            override=acceptance,
            fail_on=list(settings.fail_on),
            reason=f"{accepted_by(acceptance)} despite {summary}",
        )
    if settings.override_label and settings.override_label in set(labels):
        label = Override(kind="label", label=settings.override_label)
        return GateDecision(
            verdict="pass",
            failures=failures,
            overridden=True,
            override=label,
            fail_on=list(settings.fail_on),
            reason=f"{accepted_by(label)} despite {summary}",
        )
    return GateDecision(verdict="fail", reason=summary, failures=failures, fail_on=list(settings.fail_on))


def accepted_by(override: Override) -> str:
    """`accepted by @login for commit abc: reason`, or the label, with who added it and when once that is known."""
    if override.kind == "comment":
        return f"accepted by @{override.by} for commit {(override.sha or '')[:12]}: {override.reason}"
    who = f" (added by @{override.by} at {override.at})" if override.by and override.at else ""
    return f"accepted by the '{override.label}' label{who}"


def name_who_labelled(decision: GateDecision, login: str, at: str) -> None:
    """The label's override, completed with who added the label and when (the issue's timeline says)."""
    override = decision.override
    if override is None or override.kind != "label" or not decision.failures:
        return
    plain = accepted_by(override)
    override.by, override.at = login, at
    decision.reason = decision.reason.replace(plain, accepted_by(override), 1)
