"""What the gate decides, as data: the verdict, each condition that failed it, which compared verdicts gate, and a
note for each regression that is reported but does not gate. No sentence is made here: `gate/wording.py` words
them and `gate/comparison_file.py` stores each beside its sentence in comparison.json.

Every model is frozen: the gate returns a new decision and never edits the comparison it judged.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, ConfigDict

from adk_eval_gate.baseline.comparison_format import (
    DriftRow,
    EfficiencyRow,
    HistoryReport,
    Override,
    PooledSummary,
    Row,
    Summary,
)
from adk_eval_gate.baseline.decision_records import FailureKind, NotGatingKind, Subject
from adk_eval_gate.baseline.pass_k_models import PassKRow
from adk_eval_gate.baseline.row_notes import Settle


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


Compared = Row | Summary | PooledSummary | DriftRow | EfficiencyRow


def subject_of(row: Compared) -> Subject:
    """The subject of a compared row: the same for the row the gate judged and the row the report shows."""
    if isinstance(row, Row):
        return Subject(
            scope="case", agent=row.agent, criterion=row.criterion, eval_set_id=row.eval_set_id, eval_id=row.eval_id
        )
    if isinstance(row, Summary):
        return Subject(scope="eval_set", agent=row.agent, criterion=row.criterion, eval_set_id=row.eval_set_id)
    if isinstance(row, PooledSummary):
        return Subject(scope="pooled", agent=row.agent, criterion=row.criterion, eval_sets=row.eval_sets_compared)
    if isinstance(row, DriftRow):
        return Subject(scope="drift", agent=row.agent, criterion=row.criterion)
    return Subject(scope="efficiency", agent=row.agent, criterion=row.metric, eval_set_id=row.eval_set_id)


class Failure(_Frozen):
    """One condition that failed the gate. A compared verdict's failure quotes that verdict's own reason (looked up
    by subject when rendered); a status failure quotes the results file's `detail` (a case's or a criterion's
    reason, the baseline's or the history's error)."""

    kind: FailureKind
    subject: Subject | None = None
    detail: str | None = None
    condition: str | None = None  # efficiency: the gate.fail_on condition, e.g. cost_regression
    rate: float | None = None  # pass_rate: the run's pass rate
    minimum: float | None = None  # pass_rate: gate.min_pass_rate


class NotGating(_Frozen):
    """Why a regression is reported but does not fail the gate. `condition`: the gate.fail_on condition it lacks
    (lacks_condition; case_alone when case_regression is missing)."""

    kind: NotGatingKind
    subject: Subject
    condition: str | None = None


class LookedAt(_Frozen):
    """What a passing gate looked at, for its headline."""

    eval_sets_compared: int = 0
    pooled: int = 0
    drift_tests: int = 0  # counted only when the drift gate is on
    merges: int | None = None
    regressions_not_gating: int = 0


class Decision(_Frozen):
    """The gate's decision, before any sentence. `overridden`: a failing gate passed by `override`."""

    verdict: Literal["pass", "fail"]
    fail_on: tuple[str, ...]
    has_baseline: bool
    failures: tuple[Failure, ...] = ()
    gating: frozenset[Subject] = frozenset()
    not_gating: tuple[NotGating, ...] = ()
    override: Override | None = None
    unconfirmed: int = 0
    settle: Settle | None = None
    looked_at: LookedAt = LookedAt()

    @property
    def overridden(self) -> bool:
        return self.override is not None


@dataclass(frozen=True)
class ComparedVerdicts:
    """What the gate judges: every compared verdict, as compare, the history and the efficiency test left them."""

    pooled: tuple[PooledSummary, ...]
    summaries: tuple[Summary, ...]
    rows: tuple[Row, ...]
    efficiency: tuple[EfficiencyRow, ...] = ()
    history: HistoryReport | None = None
    has_baseline: bool = True
    baseline_error: str | None = None
    pass_k: tuple[PassKRow, ...] = ()  # gate.pass_k's per-eval-set rows (gate/pass_k_gate.py)
