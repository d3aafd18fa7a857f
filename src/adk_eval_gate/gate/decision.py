"""Compare the results with the stored baseline and, when the config keeps one, the default branch's
history (drift, known flaky cases, trends)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import cast

from adk_eval_gate.baseline.compare import compare, decide_gating
from adk_eval_gate.baseline.comparison_format import AgentPower, BaselineIdentity, DriftRow, Override, Row
from adk_eval_gate.baseline.efficiency_compare import compare_efficiency
from adk_eval_gate.baseline.history import HistoryState, HistoryView, history_view
from adk_eval_gate.baseline.history.drift import explained
from adk_eval_gate.baseline.power_report import assess, designs_from_results, mark_unconfirmed
from adk_eval_gate.baseline.provenance_changes import ChangedBesidesCode, like_for_like, provenance_changes
from adk_eval_gate.baseline.stores import LoadOutcome
from adk_eval_gate.config.workflow_settings import GateSettings
from adk_eval_gate.gate.blind_spots import blind_spots
from adk_eval_gate.gate.outcome import ComparedVerdicts, Decision
from adk_eval_gate.gate.pass_k_gate import gated_pass_k
from adk_eval_gate.gate.policy import decide
from adk_eval_gate.results.results_format import ResultsFile


def _view(
    history: HistoryState | None, current: ResultsFile, outcome: LoadOutcome, gate: GateSettings
) -> HistoryView | None:
    if history is None:
        return None
    base_sha = outcome.baseline.identity.sha if outcome.baseline else None
    return history_view(history, current, gate, base_sha)


def _with_stability(row: Row, view: HistoryView) -> Row:
    known = view.known.get((row.agent, row.eval_set_id, row.eval_id, row.criterion))
    return row.model_copy(update={"stability": known.stability if known else None})


@dataclass(frozen=True)
class GatedComparison:
    """A comparison and the gate's decision over it, before any sentence of the gate's: `gate/comparison_file.py`
    makes the comparison file of it."""

    baseline: BaselineIdentity | None
    warnings: tuple[str, ...]
    compared: ComparedVerdicts
    power: tuple[AgentPower, ...]
    decision: Decision
    changed: ChangedBesidesCode | None = None  # judge, served model or scorer versions: the report's first line


def _warnings(outcome: LoadOutcome, gate: GateSettings, max_age_days: float | None) -> list[str]:
    """A gate that cannot fail says so first; then the store's warnings and a baseline older than allowed."""
    warnings = [*blind_spots(gate), *outcome.warnings]
    baseline = outcome.baseline
    if baseline and max_age_days is not None and (baseline.identity.age_days or 0) > max_age_days:
        warnings.append(
            f"the baseline is {baseline.identity.age_days:.0f} days old (from "
            f"{baseline.identity.sha or 'an unknown commit'}); "
            "refresh it by updating the baseline on the default branch"
        )
    return warnings


def _settle_file(outcome: LoadOutcome) -> str | None:
    """A baseline file (not an artifact's or a branch's): what would settle an unconfirmed drop names it."""
    source = outcome.baseline.identity.source if outcome.baseline else None
    return None if source is None or source.startswith(("artifact ", "branch ")) else source


def gate_comparison(
    current: ResultsFile,
    outcome: LoadOutcome,
    gate: GateSettings,
    labels: Iterable[str] = (),
    *,
    max_age_days: float | None = None,
    acceptance: Override | None = None,
    history: HistoryState | None = None,
) -> GatedComparison:
    baseline = outcome.baseline
    warnings = _warnings(outcome, gate, max_age_days)
    view = _view(history, current, outcome, gate)
    drift = view.drift if view else []
    # The drift tests share the gate's false-alarm budget only when they gate; otherwise they are their own family.
    drift_gates = "drift" in gate.fail_on
    compared = compare(
        current,
        like_for_like(baseline.results, current) if baseline else None,  # never a drop across judges or scorers
        gate.tolerance_for,
        gate.alpha,
        gate.case_fdr,
        quarantined=view.quarantined if view else (),
        also_gating=drift if drift_gates else (),
    )
    report, rows = None, compared.rows
    if view is not None:
        decided = compared.also_gating if drift_gates else decide_gating(drift, gate.alpha)
        since = view.report.since or ""
        report = view.report.model_copy(update={"drift": explained(cast(list[DriftRow], decided), since)})
        rows = [_with_stability(row, view) for row in rows]
    designs = designs_from_results(current, baseline.results if baseline else None)
    # the drift tests share the Holm family when they gate: they count in what the family lets each verdict confirm
    in_family = len(drift) if drift_gates else 0
    marked = mark_unconfirmed(
        compared.pooled, compared.summaries, designs, gate, in_family, compared.rows, _settle_file(outcome)
    )
    efficiency = compare_efficiency(current, baseline.results if baseline else None, gate)
    judged = ComparedVerdicts(
        pooled=tuple(marked.pooled),
        summaries=tuple(marked.summaries),
        rows=tuple(rows),
        efficiency=tuple(efficiency),
        history=report,
        has_baseline=baseline is not None,
        baseline_error=outcome.error,
        pass_k=gated_pass_k(current, baseline.results if baseline else None, gate),
    )
    settle = marked.settles[0] if marked.settles else None
    decision = decide(judged, current, gate, labels=labels, acceptance=acceptance, settle=settle)
    return GatedComparison(
        baseline=baseline.identity if baseline else None,
        warnings=tuple(warnings),
        compared=judged,
        power=tuple(assess(designs, gate, in_family)),
        decision=decision,
        changed=provenance_changes(baseline.results, current) if baseline else None,
    )
