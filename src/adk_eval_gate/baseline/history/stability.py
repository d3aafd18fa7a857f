"""Which cases are known to be flaky or broken: from the history, not rediscovered on every pull request.

Per case × criterion, the newest `history.flaky.records` records in which the case and the criterion were as they
are now (same case hash, same criterion configuration) are read as commits of run outcomes (each run's own
pass/fail for that criterion, `results.flakiness`):

* `flaky` when it disagreed with itself (`results.flakiness.is_flaky`, the definition report.html's tag uses too):
  some run of one commit passed and another failed, or its outcome turned at least three times from record to
  record. A disagreement is proof, so no minimum of runs applies;
* otherwise, with at least `min_samples` runs: `broken` when every run failed, `stable` when every run passed;
  a case one merge broke (pass, pass, fail, fail) is neither — it turned once, a regression, the drift gate's
  business — and calling it flaky (let alone quarantining it) would hide exactly what the history is for.

Records written before run outcomes were kept say nothing here. `gate.quarantine: flaky` takes out only a flaky
case whose share of passing runs, over at least `min_samples` runs, lies in [low, high]: a coin, not a case that
slipped once in twenty runs.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from adk_eval_gate.baseline.history.lookup import CaseKey, CaseSpec, index, old_runs_in
from adk_eval_gate.baseline.history.record_format import EvalSetRecord, HistoryRecord
from adk_eval_gate.config.history import FlakySettings
from adk_eval_gate.results.flakiness import RunOutcomes, fails_every_run, is_flaky

Stability = Literal["stable", "flaky", "broken"]


@dataclass(frozen=True)
class Known:
    stability: Stability
    passes: int  # runs that passed
    samples: int  # runs with an outcome
    records: int


def classify(commits: Sequence[RunOutcomes], settings: FlakySettings) -> Stability | None:
    """`commits` oldest first: (runs passed, runs) per record."""
    if is_flaky(commits):
        return "flaky"
    passed, runs = sum(c[0] for c in commits), sum(c[1] for c in commits)
    if runs < settings.min_samples:
        return None
    if fails_every_run(commits):
        return "broken"
    return "stable" if passed == runs else None


def quarantinable(known: Known, settings: FlakySettings) -> bool:
    """Flaky, and enough runs to tell its share of passes lies in [low, high]."""
    if known.stability != "flaky" or known.samples < settings.min_samples:
        return False
    return settings.low <= known.passes / known.samples <= settings.high


def known_cases(
    records: Sequence[HistoryRecord], specs: Sequence[CaseSpec], settings: FlakySettings
) -> dict[CaseKey, Known]:
    """Every case × criterion of `specs` the history can say something about."""
    indexes = [index(r) for r in records[-settings.records :]]
    found: dict[CaseKey, Known] = {}
    # Most cases read alike (every run passed in every record), and a flaky one moves between a few outcomes: a
    # label is decided once per distinct sequence of outcomes, not once per case (10,000 cases: a few hundred).
    decided: dict[tuple[RunOutcomes, ...], Known | None] = {}
    by_set: dict[tuple[str, str], list[EvalSetRecord]] = {}  # a case's eval set in each record: found once a set
    for spec in specs:
        key = (spec.agent, spec.eval_set_id)
        if key not in by_set:
            by_set[key] = [s for sets in indexes if (s := sets.get(key)) is not None]
        commits = tuple(c for old_set in by_set[key] if (c := old_runs_in(old_set, spec)) is not None)
        if commits not in decided:
            label = classify(commits, settings)
            decided[commits] = (
                None
                if label is None
                else Known(label, sum(c[0] for c in commits), sum(c[1] for c in commits), len(commits))
            )
        known = decided[commits]
        if known is not None:
            found[spec.key] = known
    return found
