"""A case's drop that its judge's own disagreement explains is not an agent regression (docs/judge-noise.md).

A sampled judge (final_response_match_v2, the rubric-based criteria) scores a turn by the majority of its
`num_samples` judgements, ADK's rule. The majority turns a small shift of the judge's leaning into a full flip: a
turn judged valid 3 times in 5 scores 1, judged valid 2 times in 5 it scores 0, though the judge barely moved. The
results file keeps every judgement of every turn (`InvocationResult.judgements`), so a compared case can be weighed
again on each turn's **judge-averaged** score (the mean of its judgements): the agent's change without the
majority's amplification of the judge's noise.

A case row the comparison decided `regressed` becomes `inconclusive`, its note `within_judge_noise`, when the judge
disagreed with itself on the case (a flip rate above 0) and, weighed on judge-averaged scores, the drop is within
tolerance or its one-sided test's p-value — not adjusted for the run's many rows, so the bar to excuse is the
highest there is — is not below the level the row was decided at. Nothing else changes: no other row, no eval-set or
pooled verdict, no score. Only a regressed case row can change, and only away from failing, so the gate's false
alarms can only fall (never rise) and its eval-set and pooled tests are untouched; the cost is power on a case whose
judge is unsure of it, which is where a "regression" is the least trustworthy. The evidence must be whole: both
sides must carry the judgements of every scored turn, and no turn's re-judging may have stopped short; otherwise
the row stands as decided (fail closed: an older baseline without judgements never excuses anything).
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence

from adk_eval_gate.baseline.models import Row
from adk_eval_gate.baseline.row_notes import VerdictNote
from adk_eval_gate.baseline.stats import permutation_test
from adk_eval_gate.results.models import MetricResult, ResultsFile

MetricKey = tuple[str, str, str, str]  # (agent, eval set, case, criterion)


def judge_averaged(metric: MetricResult) -> list[float] | None:
    """Every scored turn of every run as the mean of its judgements, in the order of its scores (strata.samples);
    None when any scored turn lacks judgements or its re-judging stopped short: the evidence is not whole."""
    values: list[float] = []
    for run in metric.runs:
        for item in run.per_invocation if run is not None else ():
            if item.score is None:
                continue
            if not item.judgements or item.unjudged:
                return None
            values.append(statistics.fmean(item.judgements))
    return values or None


def flip_rate(metrics: Sequence[MetricResult]) -> float | None:
    """The judge's flip rate over both sides' turns, pooled by their pairs of judgements."""
    noise = [m.judge_noise for m in metrics if m.judge_noise is not None and m.judge_noise.flip_rate is not None]
    pairs = sum(n.pairs for n in noise)
    if not pairs:
        return None
    return sum((n.flip_rate or 0.0) * n.pairs for n in noise) / pairs


def within_judge_noise(row: Row, base: MetricResult, current: MetricResult) -> Row:
    """The row again: `inconclusive` and noted `within_judge_noise` when its drop is the judge's, else as it was."""
    note = row.note
    if row.verdict != "regressed" or not isinstance(note, VerdictNote) or note.kind != "dropped":
        return row
    flips = flip_rate([base, current])
    base_values, current_values = judge_averaged(base), judge_averaged(current)
    if not flips or base_values is None or current_values is None:
        return row
    test = permutation_test(base_values, current_values)
    if test is None:
        return row
    level = note.alpha if note.alpha is not None else 0.0
    if test.delta < 0 and -test.delta >= note.tolerance and test.p_drop < level:
        return row  # the drop holds on judge-averaged scores too: the agent's
    excused = VerdictNote(
        kind="within_judge_noise",
        delta=note.delta,
        tolerance=note.tolerance,
        p=test.p_drop,
        alpha=level,
        method=test.method,
        judge_flip=flips,
        judge_delta=test.delta,
    )
    return row.model_copy(update={"verdict": "inconclusive", "note": excused})


def _metrics(results: ResultsFile | None) -> dict[MetricKey, MetricResult]:
    if results is None:
        return {}
    return {
        (s.agent, s.eval_set_id, c.eval_id, name): metric
        for s in results.eval_sets
        for c in s.cases
        for name, metric in c.metrics.items()
    }


def excuse_judge_noise(rows: Sequence[Row], current: ResultsFile, baseline: ResultsFile | None) -> list[Row]:
    """Every case row again, those whose drop is within judge noise re-decided (new rows: none is edited)."""
    if not any(r.verdict == "regressed" for r in rows):
        return list(rows)
    current_metrics, base_metrics = _metrics(current), _metrics(baseline)
    out = []
    for row in rows:
        key = (row.agent, row.eval_set_id, row.eval_id, row.criterion)
        base, cur = base_metrics.get(key), current_metrics.get(key)
        out.append(within_judge_noise(row, base, cur) if base is not None and cur is not None else row)
    return out
