"""ADK's own way of showing a case: per metric the turns that missed, expected beside actual (the
`AssertionError` lines of AgentEvaluator), and `--print-detailed-results`' tables, as `adk eval` prints them."""

from __future__ import annotations

import json
import statistics
from dataclasses import dataclass

from adk_eval_gate.core.clip import clip, single_line
from adk_eval_gate.core.json_types import JsonObject
from adk_eval_gate.criteria import efficiency_metrics as efficiency
from adk_eval_gate.evalsets.adk_eval_schema import Invocation, content_text, tool_calls
from adk_eval_gate.results.results_format import CaseResult

_CELL = 25  # ADK's `maxcolwidths`
_DIFF_TEXT = 400


@dataclass(frozen=True)
class _Turn:
    """One invocation of one run, as ADK's detail table and CSV show it."""

    run: int
    index: int
    status: str
    score: float | None
    expected: Invocation | None
    actual: Invocation | None

    def cells(self) -> dict[str, str]:
        shown = self.expected or self.actual
        prompt = shown.user_content if shown else None
        return {
            "prompt": content_text(prompt),
            "expected_response": content_text(self.expected.final_response) if self.expected else "",
            "actual_response": content_text(self.actual.final_response) if self.actual else "",
            "expected_tool_calls": _calls(self.expected),
            "actual_tool_calls": _calls(self.actual),
        }


def _calls(invocation: Invocation | None) -> str:
    if invocation is None:
        return ""
    return "\n".join(
        f"{c.name}({json.dumps(c.args, sort_keys=True, ensure_ascii=False)})"
        for c in tool_calls(invocation.intermediate_data)
    )


@dataclass(frozen=True)
class MetricVerdict:
    name: str
    threshold: float
    score: float | None
    status: str  # passed | failed | not_evaluated
    turns: tuple[_Turn, ...]


def _turns(case: CaseResult, expected: list[Invocation], metric_name: str) -> list[_Turn]:
    metric = case.metrics[metric_name]
    turns = []
    for run_metric in metric.runs:
        if run_metric is None:
            continue
        record = next((r for r in case.runs if r.run == run_metric.run), None)
        actual = [Invocation.model_validate(i) for i in (record.actual_invocations or [])] if record else []
        for index, result in enumerate(run_metric.per_invocation):
            turns.append(
                _Turn(
                    run_metric.run,
                    index,
                    result.status,
                    result.score,
                    expected[index] if index < len(expected) else None,
                    actual[index] if index < len(actual) else None,
                )
            )
    return turns


def metric_verdict(case: CaseResult, expected: list[Invocation], metric_name: str) -> MetricVerdict:
    """ADK's rule: the mean of every run's non-None per-invocation scores against the threshold; the direction
    comes from the per-invocation verdicts when they all agree (lower-is-better custom metrics), else `>=`."""
    metric = case.metrics[metric_name]
    turns = _turns(case, expected, metric_name)
    scores = [t.score for t in turns if t.score is not None]
    overall = statistics.mean(scores) if scores else None
    directions = {
        (t.score > metric.threshold) == (t.status == "passed")
        for t in turns
        if t.score is not None and t.score != metric.threshold and t.status in ("passed", "failed")
    }
    higher_is_better = directions.pop() if len(directions) == 1 else True
    if overall is None:
        status = "not_evaluated"
    elif overall >= metric.threshold if higher_is_better else overall <= metric.threshold:
        status = "passed"
    else:
        status = "failed"
    return MetricVerdict(metric_name, metric.threshold, overall, status, tuple(turns))


def _printable(text: str) -> str:
    """One line without control characters: an agent's output must not drive the user's terminal."""
    return "".join(ch for ch in single_line(text) if ch.isprintable())  # masked before the join


def _short(text: str) -> str:
    return clip(_printable(text), _DIFF_TEXT)


def missed_turns(eval_id: str, verdict: MetricVerdict) -> list[str]:
    """The turns that missed, expected beside actual, so a failing test says what to look at. Runs that missed
    a turn the same way share one entry."""
    entries: dict[tuple[int, str, str, tuple[str, ...]], list[int]] = {}
    for turn in verdict.turns:
        if turn.status == "passed":
            continue
        cells = turn.cells()
        lines = []
        for label, key in (("tool calls", "tool_calls"), ("response", "response")):
            expected, actual = cells[f"expected_{key}"], cells[f"actual_{key}"]
            if turn.expected is not None and expected != actual:
                lines += [
                    f"    - expected {label}: {_short(expected) or '(none)'}",
                    f"    + actual {label}:   {_short(actual) or '(none)'}",
                ]
        score = "no score" if turn.score is None else f"score {turn.score:.4g}"
        entries.setdefault((turn.index, score, _short(cells["prompt"]), tuple(lines)), []).append(turn.run + 1)
    out = []
    for (index, score, prompt, missed), runs in entries.items():
        which = f"run {runs[0]}" if len(runs) == 1 else f"runs {', '.join(map(str, runs))}"
        out += [f"  case {eval_id!r}, turn {index + 1}, {which} ({score}): {prompt}", *missed]
    return out


def _grid(rows: list[JsonObject]) -> str:
    """ADK prints `tabulate(..., tablefmt="grid", maxcolwidths=25)`; a plain grid with the same columns."""
    if not rows:
        return ""
    headers = list(rows[0])
    cells = [[_clip(str(row[h] if row[h] is not None else "")) for h in headers] for row in rows]
    widths = [max(len(h), *(len(r[i]) for r in cells)) for i, h in enumerate(headers)]
    rule = "+" + "+".join("-" * (w + 2) for w in widths) + "+"

    def line(values: list[str]) -> str:
        return "| " + " | ".join(v.ljust(w) for v, w in zip(values, widths, strict=True)) + " |"

    return "\n".join([rule, line(headers), rule.replace("-", "="), *(x for r in cells for x in (line(r), rule))])


def _clip(text: str) -> str:
    return clip(_printable(text), _CELL)


_ADK_STATUS = {
    "passed": "EvalStatus.PASSED",
    "failed": "EvalStatus.FAILED",
    "not_evaluated": "EvalStatus.NOT_EVALUATED",
}


def print_details(verdict: MetricVerdict) -> None:
    print(
        f"Summary: `{_ADK_STATUS[verdict.status]}` for Metric: `{verdict.name}`. "
        f"Expected threshold: `{verdict.threshold}`, actual value: `{verdict.score}`."
    )
    rows = [
        {
            "eval_status": _ADK_STATUS.get(t.status, t.status),
            "score": t.score,
            "threshold": verdict.threshold,
            **t.cells(),
        }
        for t in verdict.turns
    ]
    print(_grid(rows))
    print("\n\n")


def print_efficiency(case: CaseResult) -> None:
    """ADK prints its informational metrics too: every run's per-invocation values, pooled, and no threshold."""
    runs = [[Invocation.model_validate(i) for i in r.actual_invocations] for r in case.runs if r.actual_invocations]
    for name in efficiency.NAMES:
        values = [v for run in runs for v in efficiency.run_value(name, run).per_invocation if v is not None]
        overall = statistics.mean(values) if values else None
        print(
            f"Summary: `EvalStatus.INFORMATIONAL` for Metric: `{name}`. Expected threshold: `None`, "
            f"actual value: `{overall}`."
        )


def print_case_details(eval_set_id: str, case: CaseResult, expected: list[Invocation]) -> None:
    """`adk eval --print_detailed_results`: every metric's summary and per-invocation grid for one case."""
    print(f"Eval set `{eval_set_id}`, case `{case.eval_id}`: {case.status}")
    for name in case.metrics:
        print_details(metric_verdict(case, expected, name))
    print_efficiency(case)
