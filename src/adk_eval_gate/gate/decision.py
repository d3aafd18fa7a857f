"""Stage 6: compare the results with the stored baseline."""

from __future__ import annotations

from collections.abc import Iterable

from adk_eval_gate.baseline.compare import compare
from adk_eval_gate.baseline.efficiency_compare import compare_efficiency
from adk_eval_gate.baseline.models import Comparison, Override
from adk_eval_gate.baseline.stores import LoadOutcome
from adk_eval_gate.config.models import GateSettings
from adk_eval_gate.gate.policy import decide
from adk_eval_gate.results.models import ResultsFile


def build_comparison(
    current: ResultsFile,
    outcome: LoadOutcome,
    gate: GateSettings,
    labels: Iterable[str] = (),
    *,
    max_age_days: float | None = None,
    acceptance: Override | None = None,
) -> Comparison:
    baseline = outcome.baseline
    warnings = list(outcome.warnings)
    if baseline and max_age_days is not None and (baseline.identity.age_days or 0) > max_age_days:
        warnings.append(
            f"the baseline is {baseline.identity.age_days:.0f} days old (from "
            f"{baseline.identity.sha or 'an unknown commit'}); "
            "refresh it by updating the baseline on the default branch"
        )
    pooled, summaries, rows = compare(
        current, baseline.results if baseline else None, gate.tolerance_for, gate.alpha, gate.case_fdr
    )
    efficiency = compare_efficiency(current, baseline.results if baseline else None, gate)
    decision = decide(
        current,
        pooled,
        summaries,
        rows,
        gate,
        has_baseline=baseline is not None,
        labels=labels,
        baseline_error=outcome.error,
        efficiency=efficiency,
        acceptance=acceptance,
    )
    efficiency.sort(key=lambda e: (e.verdict != "regressed", not e.gating, e.verdict != "improved", -abs(e.change)))
    return Comparison(
        verdict=decision.verdict,
        baseline=baseline.identity if baseline else None,
        warnings=warnings,
        gate=decision,
        pooled=pooled,
        summaries=summaries,
        rows=rows,
        efficiency=efficiency,
    )
