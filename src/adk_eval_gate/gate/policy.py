"""The gate's decision: which verdicts and statuses fail the check, and the override label that can accept a
failing gate with a visible note."""

from __future__ import annotations

from collections.abc import Iterable

from ..baseline.models import GateDecision, Row, Summary
from ..config.models import GateSettings
from ..results.models import ResultsFile


def _where(item: Row | Summary) -> str:
    case = f" {item.eval_id}" if isinstance(item, Row) else ""
    return f"{item.agent}/{item.eval_set_id}{case} {item.criterion}"


def _failures(results: ResultsFile, summaries: list[Summary], rows: list[Row], settings: GateSettings,
              has_baseline: bool, baseline_error: str | None = None) -> list[str]:
    fail_on = set(settings.fail_on)
    cases = [(s, c) for s in results.eval_sets for c in s.cases]
    found: list[str] = []
    if "regression" in fail_on:
        found += [f"regression: {_where(s)} {s.reason}" for s in summaries if s.verdict == "regressed"]
    if "case_regression" in fail_on:
        found += [f"case regression: {_where(r)} {r.reason}" for r in rows if r.verdict == "regressed"]
    if "inconclusive" in fail_on:
        found += [f"inconclusive: {_where(s)} {s.reason}" for s in summaries if s.verdict == "inconclusive"]
    if "not_comparable" in fail_on:
        found += [f"not comparable: {_where(r)} {r.reason}" for r in rows if r.verdict == "not_comparable"]
    if "threshold" in fail_on:
        found += [f"below threshold: {s.agent}/{s.eval_set_id} {c.eval_id}: {c.reason}" for s, c in cases if c.status == "failed"]
    if "error" in fail_on:
        if baseline_error:
            found.append(f"error: the baseline could not be loaded, so no regression could be seen: {baseline_error}")
        found += [f"error: {s.agent}/{s.eval_set_id} {c.eval_id}: {c.reason}" for s, c in cases if c.status == "error"]
    if "not_evaluated" in fail_on:
        found += [f"not evaluated: {s.agent}/{s.eval_set_id} {c.eval_id} {name}: {m.reason}"
                  for s, c in cases for name, m in c.metrics.items() if m.status == "not_evaluated"]
    if "no_baseline" in fail_on and not has_baseline:
        found.append("no baseline: there was no baseline to compare with")
    if settings.min_pass_rate is not None and cases:
        rate = sum(c.status == "passed" for _, c in cases) / len(cases)
        if rate < settings.min_pass_rate:
            found.append(f"pass rate {rate:.1%} is below the minimum {settings.min_pass_rate:.0%}")
    return found


def decide(results: ResultsFile, summaries: list[Summary], rows: list[Row], settings: GateSettings, *,
           has_baseline: bool, labels: Iterable[str] = (), baseline_error: str | None = None) -> GateDecision:
    failures = _failures(results, summaries, rows, settings, has_baseline, baseline_error)
    if not failures:
        regressions = sum(s.verdict == "regressed" for s in summaries)
        compared = sum(s.cases_compared > 0 for s in summaries)
        if not has_baseline:
            reason = "no baseline yet: every case is new; the gate's conditions hold"
        else:
            reason = f"no failing condition ({', '.join(settings.fail_on) or 'none'}) in {compared} eval-set comparison(s)"
            if regressions:
                reason += f"; {regressions} regression(s) reported but not gating"
        return GateDecision(verdict="pass", reason=reason, fail_on=list(settings.fail_on))
    summary = f"{len(failures)} failing condition(s); first: {failures[0]}"
    if settings.override_label and settings.override_label in set(labels):
        return GateDecision(verdict="pass", failures=failures, overridden=True, fail_on=list(settings.fail_on),
                            reason=f"accepted by the '{settings.override_label}' label despite {summary}")
    return GateDecision(verdict="fail", reason=summary, failures=failures, fail_on=list(settings.fail_on))
