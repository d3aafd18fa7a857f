"""Which cases are known to be flaky: from the history, not rediscovered on every pull request.

Per case × criterion, the samples at or above the threshold are summed over the newest `history.flaky.records`
records in which the case and the criterion were as they are now (same case hash, same criterion configuration).
With at least `min_samples` samples, a share of passes below `low` is `broken`, above `high` `stable`, and in
[low, high] `flaky` — provided the case behaved like a coin, not like a change: some run of one commit disagreed
with another run of the same commit, or its outcome turned at least three times from record to record. A case
that one merge broke (pass, pass, fail, fail) turned once; it is a regression, the drift gate's business, and
calling it flaky (let alone quarantining it) would hide exactly what the history is for. With fewer samples,
nothing is claimed.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass

from adk_eval_gate.baseline.history.lookup import CaseKey, CaseSpec, index, old_score
from adk_eval_gate.baseline.history.models import CaseScore, HistoryRecord
from adk_eval_gate.config.history import FlakySettings


@dataclass(frozen=True)
class Known:
    stability: str
    passes: int
    samples: int
    records: int


TURNS = 3  # outcome changes from record to record that only chance explains (one: a change; two: broke, then fixed)


def classify(scores: Sequence[CaseScore], settings: FlakySettings) -> str | None:
    """`scores` oldest first: (mean, passes, samples) per record."""
    passes, samples = sum(s[1] for s in scores), sum(s[2] for s in scores)
    if samples < settings.min_samples:
        return None
    rate = passes / samples
    if rate < settings.low:
        return "broken"
    if rate > settings.high:
        return "stable"
    mixed = any(0 < p < n for _, p, n in scores)
    states = [p / n for _, p, n in scores if n]
    turns = sum(a != b for a, b in itertools.pairwise(states))
    return "flaky" if mixed or turns >= TURNS else None


def known_cases(
    records: Sequence[HistoryRecord], specs: Sequence[CaseSpec], settings: FlakySettings
) -> dict[CaseKey, Known]:
    """Every case × criterion of `specs` the history can say something about."""
    indexes = [index(r) for r in records[-settings.records :]]
    found: dict[CaseKey, Known] = {}
    for spec in specs:
        scores = [s for sets in indexes if (s := old_score(sets, spec)) is not None]
        label = classify(scores, settings)
        if label is not None:
            found[spec.key] = Known(label, sum(s[1] for s in scores), sum(s[2] for s in scores), len(scores))
    return found
