"""A case's drop that its judge's own disagreement explains is not an agent regression (docs/judge-noise.md).

A sampled judge (final_response_match_v2, the rubric-based criteria) scores a turn by the majority of its
`num_samples` judgements, ADK's rule. The majority turns a small shift of the judge's leaning into a full flip: a
turn judged valid 3 times in 5 scores 1, judged valid 2 times in 5 it scores 0, though the judge barely moved. The
results file keeps every judgement of every turn (`InvocationResult.judgements`), so a compared case can be weighed
again on each turn's **judge-averaged** score (the mean of its judgements): the agent's change without the
majority's amplification of the judge's noise.

A case row the comparison decided `regressed` becomes `inconclusive`, its note `within_judge_noise`, when the judge
disagreed with itself on the case (a flip rate above 0) and the drop of its judge-averaged score is within tolerance
or no larger than the judges' own disagreement explains at the level the row was decided at: one judgement of a turn
has variance f/2 for a flip rate f, so a side's mean of n independent judgements has f/(2n), and the bound is
z(1 − level) times the spread of the difference. Only judgements surely independent count: one turn's per distinct
turn of the case, since runs that repeat an answer share its judgements through the judge cache (a side whose runs
answered differently has more independent judgements than counted: the bound is wider than it need be, never
narrower). Re-judging adds judgements to a turn, so it narrows the bound where the judge is unsure.

Nothing else changes: no other row, no eval-set or pooled verdict, no score. Only a regressed case row can change,
and only away from failing, so the gate's false alarms can only fall (never rise) and its eval-set and pooled tests
are untouched; the cost is power on a case whose judge is unsure of it, which is where a case "regression" is the
least trustworthy. The evidence must be whole: both sides must carry the judgements of every scored turn, and no
turn's re-judging may have stopped short; otherwise the row stands as decided (fail closed: an older baseline
without judgements never excuses anything).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from statistics import NormalDist

from adk_eval_gate.baseline.comparison_format import Row
from adk_eval_gate.baseline.row_notes import VerdictNote
from adk_eval_gate.results.results_format import MetricResult, ResultsFile

MetricKey = tuple[str, str, str, str]  # (agent, eval set, case, criterion)


@dataclass(frozen=True)
class JudgedSide:
    """One side of a case × criterion as its judge saw it: the mean of every judgement of every scored turn, its
    flip rate, and how many judgements are surely independent (one turn's per distinct turn: runs that repeat the
    same answer share their judgements through the judge cache, so they are not counted again)."""

    mean: float
    flip_rate: float
    independent: float


def flip_rate(metrics: Sequence[MetricResult]) -> float | None:
    """The judge's flip rate over both sides' turns, pooled by their pairs of judgements."""
    noise = [m.judge_noise for m in metrics if m.judge_noise is not None and m.judge_noise.flip_rate is not None]
    pairs = sum(n.pairs for n in noise)
    if not pairs:
        return None
    return sum((n.flip_rate or 0.0) * n.pairs for n in noise) / pairs


def judged_side(metric: MetricResult) -> JudgedSide | None:
    """None when any scored turn lacks judgements or its re-judging stopped short: the evidence is not whole."""
    per_turn: list[tuple[int, tuple[float, ...]]] = []
    for run in metric.runs:
        for index, item in enumerate(run.per_invocation if run is not None else ()):
            if item.score is None:
                continue
            if not item.judgements or item.unjudged:
                return None
            per_turn.append((index, tuple(item.judgements)))
    noise = metric.judge_noise
    if not per_turn or noise is None or noise.flip_rate is None:
        return None
    positions = {index for index, _ in per_turn}
    per_position = statistics.fmean(len(j) for _, j in per_turn)
    mean = statistics.fmean(statistics.fmean(j) for _, j in per_turn)
    return JudgedSide(mean, noise.flip_rate, len(positions) * per_position)


def judge_noise_bound(base: JudgedSide, current: JudgedSide, level: float) -> tuple[float, float]:
    """(the largest drop the judges' own disagreement explains at `level`, the one-sided p-value of the observed
    judge-averaged drop under judge noise alone). A judgement of a turn is valid with chance q; two disagree with
    chance f = 2q(1−q), so one judgement's variance is q(1−q) = f/2 and a side's mean of n independent ones f/(2n)."""
    variance = base.flip_rate / 2 / base.independent + current.flip_rate / 2 / current.independent
    spread = math.sqrt(variance)
    drop = base.mean - current.mean
    p = 1.0 - NormalDist().cdf(drop / spread) if spread > 0 else (0.0 if drop > 0 else 1.0)
    return NormalDist().inv_cdf(1.0 - level) * spread, p


def within_judge_noise(row: Row, base: MetricResult, current: MetricResult) -> Row:
    """The row again: `inconclusive` and noted `within_judge_noise` when its drop is the judge's, else as it was."""
    note = row.note
    if row.verdict != "regressed" or not isinstance(note, VerdictNote) or note.kind != "dropped":
        return row
    base_side, current_side = judged_side(base), judged_side(current)
    if base_side is None or current_side is None:
        return row
    flips = flip_rate([base, current])
    level = note.alpha if note.alpha is not None else 0.0
    if not flips or not 0.0 < level < 1.0:
        return row
    bound, p = judge_noise_bound(base_side, current_side, level)
    drop = base_side.mean - current_side.mean
    if drop >= note.tolerance and drop > bound:
        return row  # larger than the judges' disagreement explains: the agent's
    excused = VerdictNote(
        kind="within_judge_noise",
        delta=note.delta,
        tolerance=note.tolerance,
        p=p,
        alpha=level,
        method="judge-noise z-test",
        judge_flip=flips,
        judge_delta=-drop,
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
