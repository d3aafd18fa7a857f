"""A case × criterion as it is now, looked up in an old record: only when both are still as they were then."""

from __future__ import annotations

from dataclasses import dataclass

from adk_eval_gate.baseline.history.record_format import (
    HASH_LENGTH,
    CaseRecord,
    CaseScore,
    EvalSetRecord,
    HistoryRecord,
    RunCounts,
)
from adk_eval_gate.results.results_format import ResultsFile

SetIndex = dict[tuple[str, str], EvalSetRecord]
CaseKey = tuple[str, str, str, str]  # agent, eval set, case, criterion


@dataclass(frozen=True)
class CaseSpec:
    """What makes old scores of a case × criterion comparable with today's: the same case, the same criterion
    configuration (its hash and threshold)."""

    agent: str
    eval_set_id: str
    eval_id: str
    criterion: str
    case_hash: str
    config_hash: str
    threshold: float

    @property
    def key(self) -> CaseKey:
        return self.agent, self.eval_set_id, self.eval_id, self.criterion


def specs_of_results(results: ResultsFile) -> list[CaseSpec]:
    return [
        CaseSpec(
            s.agent,
            s.eval_set_id,
            c.eval_id,
            name,
            c.case_hash[:HASH_LENGTH],
            s.criteria[name].hash[:HASH_LENGTH],
            s.criteria[name].threshold,
        )
        for s in results.eval_sets
        for c in s.cases
        for name in c.metrics
        if name in s.criteria
    ]


def specs_of_record(record: HistoryRecord) -> list[CaseSpec]:
    """The cases of a record as if it were today's run (`history show` has no run of its own)."""
    return [
        CaseSpec(
            s.agent,
            s.eval_set_id,
            eval_id,
            name,
            case.case_hash,
            s.criteria[name].config_hash,
            s.criteria[name].threshold,
        )
        for s in record.eval_sets
        for eval_id, case in s.cases.items()
        for name in case.scores
        if name in s.criteria
    ]


def index(record: HistoryRecord) -> SetIndex:
    return {(s.agent, s.eval_set_id): s for s in record.eval_sets}


def _same_case(sets: SetIndex, spec: CaseSpec) -> CaseRecord | None:
    """None when the record lacks the case, or the case was edited, or the criterion's configuration changed since:
    such old scores say nothing about the case as it is now."""
    old_set = sets.get((spec.agent, spec.eval_set_id))
    return None if old_set is None else _same_case_in(old_set, spec)


def _same_case_in(old_set: EvalSetRecord, spec: CaseSpec) -> CaseRecord | None:
    old_case, old_criterion = old_set.cases.get(spec.eval_id), old_set.criteria.get(spec.criterion)
    if old_case is None or old_criterion is None:
        return None
    if old_case.case_hash != spec.case_hash:
        return None
    if old_criterion.config_hash != spec.config_hash or old_criterion.threshold != spec.threshold:
        return None
    return old_case


def old_score(sets: SetIndex, spec: CaseSpec) -> CaseScore | None:
    old_case = _same_case(sets, spec)
    return None if old_case is None else old_case.scores.get(spec.criterion)


def old_runs_in(old_set: EvalSetRecord, spec: CaseSpec) -> RunCounts | None:
    """The run outcomes of the case × criterion as it is now, in its eval set of an old record (found by the caller
    once for all its cases); None also for a record written before they were kept. Where the record left them out,
    they are its sample counts (every run one turn: `records._run_outcomes`)."""
    if not old_set.run_outcomes:
        return None
    old_case = _same_case_in(old_set, spec)
    if old_case is None:
        return None
    if spec.criterion in old_case.runs:
        return old_case.runs[spec.criterion]
    score = old_case.scores.get(spec.criterion)
    return None if score is None else (score[1], score[2])
