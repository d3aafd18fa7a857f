"""A run's provenance in a history record (`RecordProvenance`), and the marks `history show` and the page put on
the record where it changed from the one before: a new judge, served model or scorer explains a step in a trend
that the code did not make."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping

from pydantic import ValidationError

from adk_eval_gate.baseline.history.record_format import HistoryRecord, RecordProvenance
from adk_eval_gate.baseline.provenance_changes import affected, marked
from adk_eval_gate.core.clip import clip
from adk_eval_gate.results.provenance_models import UNKNOWN, JudgeProvenance, ScorerVersions
from adk_eval_gate.results.results_format import ResultsFile

_CUT = 400  # RecordProvenance's bound on a value: a run's provenance fits it


def _versions(served: Mapping[str, int]) -> str:
    known = sorted(v for v in served if v != UNKNOWN)
    return ", ".join(known) if known else UNKNOWN


def record_provenance(results: ResultsFile) -> RecordProvenance | None:
    """The short form a record keeps, or None for results from before provenance was recorded."""
    found = results.provenance
    if found is None:
        return None
    judges = {
        name: clip(f"{judge.model} ({_versions(judge.served)})" if judge.served else judge.model, _CUT)
        for name, judge in found.judges.items()
    }
    models = {
        agent: clip((f"{p.label}: " if p.label else "") + _versions(p.served), _CUT)
        for agent, p in found.agents.items()
    }
    scorers = {name: (clip(value, _CUT) if value else None) for name, value in found.scorers.model_dump().items()}
    return RecordProvenance(judges=judges, models=models, scorers=scorers)


def _differences(what: str, before: Mapping[str, str | None], after: Mapping[str, str | None]) -> list[str]:
    return [
        f"{what.format(name)} {before[name] or 'none'} → {after[name] or 'none'}"
        for name in sorted(set(before) & set(after))
        if before[name] != after[name]
    ]


def changes_between(older: HistoryRecord | None, newer: HistoryRecord) -> list[str]:
    """What changed besides the code from `older` to `newer` (nothing when either predates provenance)."""
    if older is None or older.provenance is None or newer.provenance is None:
        return []
    a, b = older.provenance, newer.provenance
    return [
        *_differences("judge of {}", a.judges, b.judges),
        *_differences("{}'s served model", a.models, b.models),
        *_differences("{}", a.scorers, b.scorers),
    ]


def with_previous(records: Iterable[HistoryRecord]) -> Iterator[tuple[HistoryRecord | None, HistoryRecord]]:
    """Each record with the one before it, reading them in turn: a long history's summaries are never all held."""
    previous = None
    for record in records:
        yield previous, record
        previous = record


def changed_mark(previous: HistoryRecord | None, record: HistoryRecord) -> dict[str, str]:
    """`{"changed": what}` when `record` changed from `previous` (the page's trend data), else nothing."""
    changed = changes_between(previous, record)
    return {"changed": "; ".join(changed)} if changed else {}


def _judge(short: str) -> JudgeProvenance:
    """A record's "model (versions)" read back: the versions as served ones (their counts are not kept)."""
    model, _, versions = short.partition(" (")
    served = {v: 1 for v in versions.removesuffix(")").split(", ") if v} if versions else {}
    return JudgeProvenance(model=model, served=served)


def drift_comparable(current: ResultsFile, reference: HistoryRecord) -> tuple[ResultsFile, list[str]]:
    """The run as the drift test may compare it with `reference`: a criterion whose judge or scorer changed since
    that record marked so that no case of it is compared (a new file); and a note per criterion left out."""
    found, kept = current.provenance, reference.provenance
    if found is None or kept is None:
        return current, []
    try:
        scorers = ScorerVersions.model_validate(kept.scorers)
    except ValidationError:  # a record of ours always holds them; one that does not cannot tell a change
        return current, []
    judges = {name: _judge(short) for name, short in kept.judges.items()}
    left = affected(judges, scorers, found, current)
    notes = [
        f"drift of {'every criterion' if name == '*' else name} not tested: scored otherwise since the reference "
        f"record ({why})"
        for name, why in sorted(left.items())
    ]
    return marked(current, left), notes
