"""The drift gate: this run against the default branch as it was `gate.drift.window` records before the base (or a
pinned record), so that many small drops, each too small to fail its own pull request, still add up to a failure.

The old side is a history record, which keeps per case × criterion only its samples' count and how many were at
or above the threshold. The test is therefore run on pass/fail samples: per case, the old record's passes and
fails against this run's samples scored against the same threshold (for a 0/1 criterion such as the trajectory
these are the scores themselves). It is the stratified permutation test every pooled verdict uses
(`baseline.stats.stratified_test`): labels exchanged only within a case, exact on 0/1 samples (the convolution of
per-case hypergeometric distributions, as in the Cochran–Mantel–Haenszel setting). One test per agent × criterion,
over all its eval sets, joins the Holm family of the gating verdicts at `gate.alpha`, so adding the drift gate
does not raise the false-alarm budget of a pull request. Only the first round of adaptive runs counts: the extra
runs went to cases chosen because they looked worse.

An agents-cli metric scores on its own scale (a 1–5 rubric, a code metric's number) and, without `thresholds:`,
passes every case: counting passes would never see it slide. Its record keeps each case's mean on that scale, so
its drift test compares means instead: per case the reference's mean against this run's, a paired sign-flip test
(`baseline.stats.sign_flip_test`) whose delta is in the metric's own units, as `gate.tolerance` is read for it
(the same as the baseline comparison reads it). It joins the same Holm family.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Collection

from adk_eval_gate.baseline.comparison_format import DriftRow
from adk_eval_gate.baseline.history.lookup import CaseKey, CaseSpec, SetIndex, old_score
from adk_eval_gate.baseline.history.record_format import HASH_LENGTH
from adk_eval_gate.baseline.row_notes import VerdictNote
from adk_eval_gate.baseline.stages import current_rounds
from adk_eval_gate.baseline.stats import TestResult, sign_flip_test, stratified_test
from adk_eval_gate.baseline.strata import samples
from adk_eval_gate.results.results_format import CaseResult, ResultsFile

Pending = tuple[DriftRow, TestResult | None, float]


def _current_values(case: CaseResult, name: str) -> list[float]:
    metric = case.metrics[name]
    if case.sampling is not None:
        return current_rounds(metric, case.sampling.first_round_runs)[0]
    return samples(metric)


Stratum = tuple[list[float], list[float], float, float, str]  # old side, new side, old mean, new mean, case


def _strata(
    current: ResultsFile, reference: SetIndex, quarantined: Collection[CaseKey]
) -> dict[tuple[str, str, bool], list[Stratum]]:
    """Per agent × criterion (and whether it is on its own scale) the cases comparable with the reference."""
    groups: dict[tuple[str, str, bool], list[Stratum]] = {}
    for eval_set in current.eval_sets:
        own_scale = eval_set.shape == "agents_cli"  # as the record marks it (`records._eval_set_record`)
        for name, config in eval_set.criteria.items():
            strata = groups.setdefault((eval_set.agent, name, own_scale), [])
            for case in eval_set.cases:
                if case.status in ("error", "not_run") or name not in case.metrics:
                    continue
                spec = CaseSpec(
                    eval_set.agent,
                    eval_set.eval_set_id,
                    case.eval_id,
                    name,
                    case.case_hash[:HASH_LENGTH],
                    config.hash[:HASH_LENGTH],
                    config.threshold,
                )
                if spec.key in quarantined:
                    continue
                old = old_score(reference, spec)
                values = _current_values(case, name)
                if old is None or not old[2] or not values:
                    continue
                mean, passes, count = old
                old_side = [1.0] * passes + [0.0] * (count - passes)
                new_side = [1.0 if v >= config.threshold else 0.0 for v in values]
                key = f"{eval_set.agent}/{eval_set.eval_set_id}/{case.eval_id}"
                strata.append((old_side, new_side, mean, statistics.fmean(values), key))
    return groups


def drift_rows(
    current: ResultsFile,
    reference: SetIndex,
    tolerance_for: Callable[[str], float],
    quarantined: Collection[CaseKey],
) -> list[Pending]:
    """One (row, test, tolerance) per agent × criterion; rows without a comparable case are left out."""
    pending: list[Pending] = []
    for (agent, name, own_scale), strata in _strata(current, reference, quarantined).items():
        if not strata:
            continue
        if own_scale:
            # a metric on its own scale has no pass/fail to count (without `thresholds:` every score passes):
            # the case means themselves are compared, in the metric's units, as the tolerance is read for it
            test = sign_flip_test([new_mean - old_mean for _, _, old_mean, new_mean, _ in strata])
            dropped = [key for _, _, old_mean, new_mean, key in strata if new_mean < old_mean]
        else:
            test = stratified_test([(old, new) for old, new, _, _, _ in strata])
            dropped = [key for old, new, _, _, key in strata if statistics.fmean(new) < statistics.fmean(old)]
        row = DriftRow(
            agent=agent,
            criterion=name,
            baseline=statistics.fmean(s[2] for s in strata),
            current=statistics.fmean(s[3] for s in strata),
            delta=test.delta if test else None,
            verdict="unchanged",
            reason="",
            cases_compared=len(strata),
            dropped_cases=dropped,
        )
        pending.append((row, test, tolerance_for(name)))
    return pending


def explained(rows: list[DriftRow], since: str) -> list[DriftRow]:
    """Every drift row again, its note naming what it was compared with and the means it compared."""
    return [row.model_copy(update={"note": _since(row, since)}) for row in rows]


def _since(row: DriftRow, since: str) -> VerdictNote:
    assert isinstance(row.note, VerdictNote)  # decided with the gating verdicts
    return row.note.model_copy(update={"since": since, "means": (row.baseline, row.current, row.cases_compared)})
