"""The history in words: trend lines (the console, `history show`) and the record list of `history show`."""

from __future__ import annotations

from collections.abc import Sequence

from adk_eval_gate.baseline.comparison_format import DriftRow, HistoryReport, Trend
from adk_eval_gate.baseline.history.provenance_marks import changes_between
from adk_eval_gate.baseline.history.record_format import HistoryRecord
from adk_eval_gate.core.clip import clip, short_sha
from adk_eval_gate.report.escape import strip_controls

_VERDICT = {"regressed": "REGRESSED", "improved": "improved", "inconclusive": "inconclusive"}


def _num(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3f}"


def _clean(text: str) -> str:
    return " ".join(strip_controls(text).split())


def first_last(trend: Trend) -> str:
    known = [v for v in trend.values if v is not None]
    return f"{_num(known[0])} → {_num(known[-1])}" if known else "n/a"


def drift_for(report: HistoryReport, trend: Trend) -> DriftRow | None:
    return next((d for d in report.drift if (d.agent, d.criterion) == (trend.agent, trend.criterion)), None)


def trend_lines(report: HistoryReport) -> list[str]:
    """One line per agent × criterion: the sparkline, first → last, this run, and the drift verdict."""
    lines = []
    width = max((len(f"{t.agent} · {t.criterion}") for t in report.trends), default=0)
    for trend in report.trends:
        name = _clean(f"{trend.agent} · {trend.criterion}").ljust(width)
        line = f"  {name}  {trend.sparkline}  {first_last(trend)}"
        if trend.current is not None:
            line += f", this run {_num(trend.current)}"
        drift = drift_for(report, trend)
        if drift is not None and drift.delta is not None:
            line += f"; drift {drift.delta:+.3f} {_VERDICT.get(drift.verdict, drift.verdict)}"
        lines.append(line)
    return lines


def history_lines(report: HistoryReport) -> list[str]:
    """What the console adds after the comparison: where the history is, trends, drift, flaky cases."""
    lines = [f"History: {_clean(report.source)}, {report.records} record(s)"]
    if report.error:
        lines.append(f"  ERROR: {_clean(report.error)}")
    lines += [f"  note: {_clean(note)}" for note in report.notes]
    if report.trends:
        lines.append(f"  Trend over the last {len(report.trends[0].values)} default-branch record(s), oldest → newest:")
        lines += ["  " + line for line in trend_lines(report)]
    if report.since:
        lines.append(f"  Drift gate compares with {_clean(report.since)}")
    for drift in report.drift:
        if drift.verdict in _VERDICT:
            lines.append(f"    {drift.agent} {drift.criterion}: {_VERDICT[drift.verdict]}  {_clean(drift.reason)}")
    flaky = [f for f in report.flaky if f.stability == "flaky"]
    broken = [f for f in report.flaky if f.stability == "broken"]
    if flaky or broken:
        quarantined = sum(f.quarantined for f in flaky)
        lines.append(
            f"  Known from the history: {len(flaky)} flaky, {len(broken)} broken case × criterion"
            + (f" ({quarantined} quarantined: reported, not gating)" if quarantined else "")
        )
        for case in report.flaky[:20]:
            lines.append(
                f"    {case.stability}: {_clean(f'{case.agent}/{case.eval_set_id} {case.eval_id} {case.criterion}')} "
                f"passed {case.passes} of {case.samples} runs over {case.records} record(s)"
                + (" (quarantined)" if case.quarantined else "")
            )
    return lines


def record_lines(records: Sequence[HistoryRecord]) -> list[str]:
    """Newest first: commit, date, and per eval set each criterion's mean, pass rate and samples, cost, latency."""
    lines = []
    for at in range(len(records) - 1, -1, -1):
        record = records[at]
        when = clip(record.date, 19, marker="")
        lines.append(f"  {short_sha(record.sha)}  {when}  adk-eval-gate {_clean(record.tool_version)}")
        if changed := changes_between(records[at - 1] if at else None, record):
            lines.append(f"      🔀 changed besides the code: {_clean('; '.join(changed))}")
        for s in record.eval_sets:
            parts = [
                f"{name} {_num(c.mean)} (pass rate {_num(c.pass_rate)}, {c.samples} samples)"
                for name, c in s.criteria.items()
            ]
            usage = [
                f"${s.cost_usd:.4g}/run" if s.cost_usd is not None else "",
                f"{s.latency_seconds:.2f} s/run" if s.latency_seconds is not None else "",
            ]
            lines.append(f"      {_clean(f'{s.agent}/{s.eval_set_id}')}: " + "; ".join(parts + [u for u in usage if u]))
    return lines
