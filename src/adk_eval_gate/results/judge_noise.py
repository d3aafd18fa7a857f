"""A sampled judge's self-disagreement on one case × criterion, as the results file records it
(`MetricResult.judge_noise`, docs/judge-noise.md): the judgements each turn of each run got, pooled."""

from __future__ import annotations

from collections.abc import Sequence

from adk_eval_gate.criteria.engine.criterion import MetricOutcome
from adk_eval_gate.criteria.judge_agreement import pooled
from adk_eval_gate.results.results_format import JudgeNoise


def judge_noise(runs: Sequence[MetricOutcome | None]) -> JudgeNoise | None:
    """None when no turn of any run carries judgements (not a sampled judge, or nothing judged)."""
    turns = [item for run in runs if run is not None for item in run.per_invocation if item.judgements]
    if not turns:
        return None
    found = pooled(item.judgements for item in turns)
    short = [item.unjudged for item in turns if item.unjudged]
    return JudgeNoise(
        judgements=found.judgements,
        rejudged=sum(item.rejudged for item in turns),
        invocations=len(turns),
        pairs=found.pairs,
        flip_rate=found.flip_rate,
        unjudged=len(short),
        unjudged_reason=short[0] if short else None,
    )
