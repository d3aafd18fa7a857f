"""Which cases are known to be flaky: from the history, not rediscovered on every pull request.

Per case × criterion, the samples at or above the threshold are summed over the newest `history.flaky.records`
records in which the case and the criterion were as they are now (same case hash, same criterion configuration).
With at least `min_samples` samples, a share of passes in [low, high] is `flaky`, below `low` `broken`, above
`high` `stable`; with fewer, nothing is claimed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from adk_eval_gate.baseline.history.lookup import CaseKey, CaseSpec, index, old_score
from adk_eval_gate.baseline.history.models import HistoryRecord
from adk_eval_gate.config.history import FlakySettings


@dataclass(frozen=True)
class Known:
    stability: str
    passes: int
    samples: int
    records: int


def classify(passes: int, samples: int, settings: FlakySettings) -> str | None:
    if samples < settings.min_samples:
        return None
    rate = passes / samples
    if rate < settings.low:
        return "broken"
    return "flaky" if rate <= settings.high else "stable"


def known_cases(
    records: Sequence[HistoryRecord], specs: Sequence[CaseSpec], settings: FlakySettings
) -> dict[CaseKey, Known]:
    """Every case × criterion of `specs` the history can say something about."""
    indexes = [index(r) for r in records[-settings.records :]]
    found: dict[CaseKey, Known] = {}
    for spec in specs:
        scores = [s for sets in indexes if (s := old_score(sets, spec)) is not None]
        passes, samples = sum(s[1] for s in scores), sum(s[2] for s in scores)
        label = classify(passes, samples, settings)
        if label is not None:
            found[spec.key] = Known(label, passes, samples, len(scores))
    return found
