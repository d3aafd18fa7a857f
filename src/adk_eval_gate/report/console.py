"""The compact per-case table printed by `run`, readable in a CI log."""

from __future__ import annotations

from typing import TYPE_CHECKING

from typing_extensions import assert_never

from adk_eval_gate.core.clip import clip_middle, clip_words, short_sha, single_line
from adk_eval_gate.gate.evidence import non_gating_regressions, regression_cases
from adk_eval_gate.report.efficiency_line import efficiency_line
from adk_eval_gate.report.escape import strip_controls
from adk_eval_gate.report.provenance_line import changed_line
from adk_eval_gate.report.spend import spend_line
from adk_eval_gate.results.missing import missing_judged_line
from adk_eval_gate.results.results_format import CaseResult, CaseStatusName, EvalSetResult, MetricResult, ResultsFile

if TYPE_CHECKING:
    from adk_eval_gate.baseline.comparison_format import Comparison, PooledSummary, Summary, Verdict


def _status_mark(status: CaseStatusName) -> str:
    match status:
        case "passed":
            return "PASS"
        case "failed":
            return "FAIL"
        case "not_evaluated":
            return "N/E"
        case "error":
            return "ERROR"
        case "not_run":
            return "NOT RUN"
        case unknown:
            assert_never(unknown)


# An agents-cli metric the config gives no threshold is a score, not a pass: it is compared with the baseline.
COMPARED = "compared with baseline"


def no_threshold(eval_set: EvalSetResult, name: str) -> bool:
    """An agents-cli metric without a `thresholds:` entry (its results carry threshold 0 for the schema's sake)."""
    config = eval_set.criteria.get(name)
    return config is not None and config.options.get("has_threshold") is False


def _cell(metric: MetricResult, compared_only: bool = False) -> str:
    if metric.score is None:
        return "n/a"
    if compared_only:
        return f"{metric.score:.3f} ({COMPARED})"
    sign = ">=" if metric.score >= metric.threshold else "< "
    return f"{metric.score:.3f} {sign} {metric.threshold:g}"


def _case_mark(eval_set: EvalSetResult, case: CaseResult) -> str:
    """A case that passed only because none of its scored criteria has a threshold passed nothing: it was scored."""
    scored = [n for n, m in case.metrics.items() if m.score is not None]
    if case.status == "passed" and scored and all(no_threshold(eval_set, n) for n in scored):
        return "SCORED"
    return _status_mark(case.status)


def _clip(text: str, width: int) -> str:
    return clip_words(single_line(strip_controls(text)), width)  # masked before the cut; words kept whole


def _clip_middle(text: str, width: int) -> str:
    """Case ids often share a long prefix and differ at the end (`checkout_flow_..._v2`): keep both ends."""
    return clip_middle(single_line(strip_controls(text)), width)


def render_table(results: ResultsFile) -> str:
    lines: list[str] = []
    for eval_set in results.eval_sets:
        names = list(eval_set.criteria)
        header = ["case", "status", *names]
        rows = []
        for case in eval_set.cases:
            cells = [_cell(case.metrics[n], no_threshold(eval_set, n)) if n in case.metrics else "-" for n in names]
            rows.append([_clip_middle(case.eval_id, 40), _case_mark(eval_set, case), *cells])
        widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
        s = eval_set.summary
        runs = str(eval_set.num_runs)
        if eval_set.adaptive_runs is not None:
            extra = sum(c.sampling is not None and c.sampling.extra is not None for c in eval_set.cases)
            runs = (
                f"adaptive {eval_set.adaptive_runs.min}–{eval_set.adaptive_runs.max}, {extra} of "
                f"{len(eval_set.cases)} cases undecided after the first round"
            )
        lines.append(
            f"{eval_set.agent} / {eval_set.eval_set_id}  ({eval_set.file}, criteria: {eval_set.criteria_source}, "
            f"runs: {runs})"
        )
        lines.append("  " + "  ".join(h.ljust(w) for h, w in zip(header, widths, strict=True)))
        for row, case in zip(rows, eval_set.cases, strict=True):
            lines.append("  " + "  ".join(str(c).ljust(w) for c, w in zip(row, widths, strict=True)).rstrip())
            if case.reason and case.status != "passed":
                lines.append(f"      ↳ {_clip(case.reason, 160)}")
        lines.append(
            f"  {s.passed}/{s.total} passed, {s.failed} failed, {s.error} errors, {s.not_evaluated} not evaluated"
        )
        if cost := efficiency_line(eval_set.cases):
            lines.append(f"  efficiency (informational), {cost}")
        lines.append("")
    t = results.summary
    lines.append(
        f"Total: {t.passed}/{t.total} cases passed, {t.failed} failed, {t.error} errors, "
        f"{t.not_evaluated} not evaluated in {results.timings.duration_seconds:.2f}s"
    )
    if missing := missing_judged_line(results):
        lines.append(f"Judged: {missing}")
    if results.budget and results.budget.not_run:
        lines.append(
            f"Not run: {results.budget.not_run} case(s): the spending limit run.max_cost_usd = "
            f"${results.budget.max_cost_usd:g} was reached (${results.budget.spent_usd:.4f} spent)"
        )
    if spend := spend_line(results):
        lines.append(f"Spent: {spend}")
    return "\n".join(lines)


def _verdict_mark(verdict: Verdict) -> str:
    match verdict:
        case "regressed":
            return "REGRESSED"
        case "error":
            return "ERROR"
        case "not_comparable":
            return "not comparable"
        case "improved" | "unchanged" | "inconclusive" | "new" | "removed":
            return verdict
        case unknown:
            assert_never(unknown)


def render_comparison(comparison: Comparison) -> str:
    """Verdict first, then one line per pooled and per eval-set verdict, then the cases behind the regressions."""
    gate = comparison.gate
    no_baseline = " — NO BASELINE, nothing was compared" if comparison.baseline is None else ""
    changed = changed_line(comparison.changed)
    lines = [strip_controls(clip_words(changed, 900))] if changed else []  # first: what changed besides the code
    lines.append(
        f"Gate: {gate.verdict.upper()}{' (overridden)' if gate.overridden else ''}{no_baseline} — {gate.reason}"
    )
    base = comparison.baseline
    if base:
        age = f", {base.age_days:.1f} days old" if base.age_days is not None else ""
        lines.append(f"Baseline: {base.source} (commit {short_sha(base.sha, 'unknown')}{age})")
    else:
        lines.append("Baseline: none")
    lines += [f"warning: {w}" for w in comparison.warnings]
    for p in comparison.pooled:
        values = f"{_num(p.baseline)} → {_num(p.current)}{_estimate(p)}"
        lines.append(
            f"  {p.agent} (all {p.eval_sets_compared} eval sets) {p.criterion}: {_mark(p)} {values}  {p.reason}"
        )
    for s in comparison.summaries:
        values = f"{_num(s.baseline)} → {_num(s.current)}{_estimate(s)}" if s.cases_compared else ""
        lines.append(f"  {s.agent}/{s.eval_set_id} {s.criterion}: {_mark(s)} {values}  {s.reason}".rstrip())
    for e in comparison.efficiency:
        if e.verdict in ("regressed", "improved") or e.gating:
            mark = "UNCONFIRMED" if e.verdict == "inconclusive" else _verdict_mark(e.verdict)
            lines.append(f"  {e.agent}/{e.eval_set_id} {e.metric} per run: {mark}  {e.reason}")
    for k_row in comparison.pass_k:  # gate.pass_k's rows: reliability, not average success (docs/pass-k.md)
        mark = {"dropped": "DROPPED", "unchanged": "ok", "not_estimable": "ERROR"}[k_row.verdict]
        lines.append(f"  {k_row.agent}/{k_row.eval_set_id} pass^{k_row.k}: {mark}  {k_row.reason}")
    for title, chosen in (
        ("Cases behind the regressions:", regression_cases(comparison)),
        ("Case drops that did not fail the gate:", non_gating_regressions(comparison)),
    ):
        if chosen:
            lines.append(title)
            lines += [f"  {r.agent}/{r.eval_set_id} {r.eval_id} {r.criterion}: {r.reason}" for r in chosen]
    if comparison.history is not None:
        from adk_eval_gate.report.history import history_lines  # the history machinery, only when there is one

        lines += history_lines(comparison.history)
    for failure in (f.text for f in gate.failures[1:6]):
        lines.append(f"  also: {failure}")
    for power in comparison.power:
        statements = "; ".join(line.statement for line in power.lines)
        warning = f" (NO regression can fail it: set {power.suggestion})" if power.weak and power.suggestion else ""
        lines.append(f"Power, {power.agent}: {statements}{warning}")
    return "\n".join(lines)


def _mark(row: Summary | PooledSummary) -> str:
    return "UNCONFIRMED" if row.unconfirmed else _verdict_mark(row.verdict)


def _estimate(row: Summary | PooledSummary) -> str:
    """Adaptive runs' means are of the samples the change is estimated from: say which."""
    return f" ({row.estimate})" if row.estimate else ""


def _num(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3f}"
