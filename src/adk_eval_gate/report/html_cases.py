"""The cases of report.html: each case's scores, comparison rows, tags for the filters, and the turns of every
run and of the eval set, reduced to what the page shows (user text, response, tool calls).

The heavy, repeated parts (a case's runs, per-run scores, turns) are arrays rather than objects, and every agent
text is stored once in the page's `texts` list and referred to by index: a thousand cases of five runs then fit
the page's size budget (bench/html_report.py). `expand_case` (and the page's script) turns a case back into
named fields."""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Mapping
from typing import Any

from adk_eval_gate.baseline.comparison_format import Comparison, Row
from adk_eval_gate.core.clip import clip
from adk_eval_gate.core.redaction import redact
from adk_eval_gate.evalsets.adk_eval_schema import Invocation, content_text, tool_calls
from adk_eval_gate.results.flakiness import is_flaky, run_outcomes
from adk_eval_gate.results.results_format import CaseResult, EvalSetResult, RunMetric, RunUsage

TEXT_LIMIT = 4000
STATUS_CODES = {"passed": "p", "failed": "f", "not_evaluated": "n", "error": "e"}
USAGE_FIELDS = ("input_tokens", "output_tokens", "model_calls", "tool_calls", "latency_seconds", "cost_usd")


class Texts:
    """Each distinct text once: runs of a steady agent repeat their answers, and every run repeats the user's."""

    def __init__(self) -> None:
        self._index: dict[str, int] = {}

    def ref(self, text: str | None) -> int | None:
        if text is None:
            return None
        return self._index.setdefault(text, len(self._index))

    def values(self) -> list[str]:
        return list(self._index)


def _clip(text: str) -> str:
    text = redact(text)  # before the cut, which would leave a secret's first half where the page's masking misses it
    if len(text) <= TEXT_LIMIT:
        return text
    head = clip(text, TEXT_LIMIT, marker="")
    return f"{head}\n… ({len(text) - len(head)} more characters in results.json)"


def _turn(invocation: Invocation, texts: Texts) -> list[Any]:
    """[user text, response text, [[tool name, args], …]], texts by reference."""
    return [
        texts.ref(_clip(content_text(invocation.user_content))),
        texts.ref(_clip(content_text(invocation.final_response))),
        [[call.name or "", call.args] for call in tool_calls(invocation.intermediate_data)],
    ]


def _turns(raw: Iterable[Mapping[str, Any]] | None, texts: Texts) -> list[list[Any]] | None:
    if raw is None:
        return None
    turns = []
    for item in raw:
        try:
            turns.append(_turn(Invocation.model_validate(item), texts))
        except ValueError:  # a recording this version cannot read: the page still shows everything else
            turns.append([texts.ref(""), texts.ref("(this turn could not be read; see results.json)"), []])
    return turns


def _metric_run(run: RunMetric | None, texts: Texts) -> list[Any] | None:
    """[score, status code, [[turn score, status code(, votes text)], …](, reason text)]."""
    if run is None:
        return None
    turns = [
        [i.score, STATUS_CODES[i.status]] + ([texts.ref(i.detail)] if i.detail else []) for i in run.per_invocation
    ]
    return [run.score, STATUS_CODES[run.status], turns] + ([texts.ref(run.reason)] if run.reason else [])


def _usage(usage: RunUsage | None) -> list[Any] | None:
    return None if usage is None else [getattr(usage, name) for name in USAGE_FIELDS]


def flaky_criteria(case: CaseResult) -> list[str]:
    """The criteria whose runs disagreed in this run (`results.flakiness`, as the history's labels): one criterion
    passing where another fails, or one turn failing in every run, is not a disagreement."""
    return [name for name, m in case.metrics.items() if is_flaky([run_outcomes(m)])]


def cases_behind(comparison: Comparison) -> dict[str, list[str]]:
    """Per regressed pooled or eval-set verdict (by its key on the page), the cases behind it: those of its eval
    set (pooled: of the agent's eval sets) whose score on that criterion dropped. A group's delta is the mean of its
    cases' deltas, so a drop has at least one; should rounding hide it, every compared case is listed rather than
    none, so the page never names a regression it cannot show. Quarantined rows left the test and are not listed.
    A regressed drift test (key `drift:agent/criterion`) is behind the cases whose share of passing samples fell
    since its reference record."""
    groups: list[tuple[str, str, str | None, str]] = [
        (f"{p.agent}/*/{p.criterion}", p.agent, None, p.criterion)
        for p in comparison.pooled
        if p.verdict == "regressed"
    ]
    groups += [
        (f"{s.agent}/{s.eval_set_id}/{s.criterion}", s.agent, s.eval_set_id, s.criterion)
        for s in comparison.summaries
        if s.verdict == "regressed"
    ]
    behind = {
        f"drift:{d.agent}/{d.criterion}": list(d.dropped_cases)
        for d in (comparison.history.drift if comparison.history else [])
        if d.verdict == "regressed"
    }
    for key, agent, eval_set_id, criterion in groups:
        rows = [
            r
            for r in comparison.rows
            if r.agent == agent
            and r.criterion == criterion
            and eval_set_id in (None, r.eval_set_id)
            and r.delta is not None
            and not r.quarantined
        ]
        dropped = [r for r in rows if (r.delta or 0.0) < 0] or rows
        behind[key] = [f"{r.agent}/{r.eval_set_id}/{r.eval_id}" for r in dropped]
    return behind


def _tags(case: CaseResult, compared: Mapping[str, Row], behind_regression: bool, flaky: bool) -> list[str]:
    tags = []
    if behind_regression or any(r.verdict == "regressed" for r in compared.values()):
        tags.append("regressed")
    if case.status == "failed":
        tags.append("failed")
    if flaky:
        tags.append("flaky")
    if any(
        r.verdict in ("regressed", "improved", "inconclusive", "new", "not_comparable") or (r.delta or 0.0) != 0.0
        for r in compared.values()
    ):
        tags.append("changed")
    if case.status == "error":
        tags.append("error")
    if case.status == "not_run":
        tags.append("not_run")
    return tags


def case_data(
    eval_set: EvalSetResult,
    case: CaseResult,
    compared: Mapping[str, Row],
    expected: list[Invocation] | None,
    texts: Texts,
    behind_regression: bool = False,
) -> dict[str, Any]:
    """`behind_regression`: the case is behind a regressed eval-set, pooled or drift verdict (`cases_behind`)."""
    flaky = flaky_criteria(case)
    metrics = {
        name: {
            "score": m.score,
            "threshold": m.threshold,
            "status": m.status,
            "reason": m.reason,
            "cause": m.cause,
            "runs": [_metric_run(r, texts) for r in m.runs],
        }
        for name, m in case.metrics.items()
    }
    return {
        "key": f"{eval_set.agent}/{eval_set.eval_set_id}/{case.eval_id}",
        "agent": eval_set.agent,
        "eval_set_id": eval_set.eval_set_id,
        "eval_id": case.eval_id,
        "status": case.status,
        "reason": case.reason,
        "tags": _tags(case, compared, behind_regression, bool(flaky)),
        "flaky": flaky,
        "metrics": metrics,
        "compared": {
            name: {
                "baseline": r.baseline,
                "current": r.current,
                "delta": r.delta,
                "estimate": r.estimate,
                "verdict": r.verdict,
                "reason": texts.ref(r.reason),  # the same few sentences over and over: stored once
                "p_value": r.p_value,
                "gating": r.gating,
            }
            for name, r in compared.items()
        },
        "expected": None if expected is None else [_turn(i, texts) for i in expected],
        "runs": [
            [r.run, r.error, r.duration_seconds, _usage(r.usage), _turns(r.actual_invocations, texts)]
            for r in case.runs
        ],
        "sampling": case.sampling.model_dump(mode="json") if case.sampling else None,
    }


def expand_case(case: Mapping[str, Any], texts: list[str]) -> dict[str, Any]:
    """A case of the page's data with named fields, as the page's script expands it."""
    words = {code: status for status, code in STATUS_CODES.items()}

    def text(ref: int | None) -> str | None:
        return None if ref is None else texts[ref]

    def turn(item: list[Any]) -> dict[str, Any]:
        return {
            "user": text(item[0]),
            "response": text(item[1]),
            "tools": [{"name": name, "args": args} for name, args in item[2]],
        }

    def metric_run(run: list[Any] | None) -> dict[str, Any] | None:
        if run is None:
            return None
        return {
            "score": run[0],
            "status": words[run[1]],
            "reason": text(run[3]) if len(run) > 3 else None,
            "turns": [[t[0], words[t[1]], text(t[2]) if len(t) > 2 else None] for t in run[2]],
        }

    return {
        **case,
        "compared": {n: {**r, "reason": text(r["reason"])} for n, r in case["compared"].items()},
        "metrics": {n: {**m, "runs": [metric_run(r) for r in m["runs"]]} for n, m in case["metrics"].items()},
        "expected": None if case["expected"] is None else [turn(t) for t in case["expected"]],
        "runs": [
            {
                "run": r[0],
                "error": r[1],
                "duration_seconds": r[2],
                "usage": None if r[3] is None else dict(zip(USAGE_FIELDS, r[3], strict=True)),
                "turns": None if r[4] is None else [turn(t) for t in r[4]],
            }
            for r in case["runs"]
        ],
    }


def _mean_case_score(eval_set: EvalSetResult, name: str) -> float | None:
    scores = [c.metrics[name].score for c in eval_set.cases if name in c.metrics]
    known = [s for s in scores if s is not None]
    return statistics.fmean(known) if known else None


def eval_set_data(s: EvalSetResult) -> dict[str, object]:
    """An eval set as the page shows it: its file, target, runs, thresholds, counts and mean case scores."""
    return {
        "key": f"{s.agent}/{s.eval_set_id}",
        "agent": s.agent,
        "eval_set_id": s.eval_set_id,
        "file": s.file,
        "target": s.target,
        "num_runs": s.num_runs,
        "adaptive_runs": s.adaptive_runs.model_dump() if s.adaptive_runs else None,
        "criteria": {name: c.threshold for name, c in s.criteria.items()},
        "counts": s.summary.model_dump(),
        "means": {name: _mean_case_score(s, name) for name in s.criteria},
    }
