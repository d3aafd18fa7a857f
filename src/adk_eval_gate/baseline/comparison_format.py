"""The comparison file (`schema_version` 2): every agent × criterion pooled over its eval sets, every agent × eval
set × criterion and every case × criterion, baseline against current, with a verdict and a one-line reason, plus
the gate's decision. `pooled` and the `gating` flags were added later, with defaults: files written before them
still load. 2: the gate's failures are data with their sentence beside them (baseline/decision_records.py), and
the notes on regressions that do not gate are stored; a file of 1 (failures as sentences alone) is still read.

Every number is finite and every count and p-value bounded by its type (`core/numbers.py`): `view` and `publish`
read comparison files an artifact carried."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator
from pydantic.json_schema import SkipJsonSchema

from adk_eval_gate.baseline.decision_records import UNRECORDED, FailureRecord, NoteRecord
from adk_eval_gate.baseline.drift_start import DriftStart
from adk_eval_gate.baseline.pass_k_models import PassKRow
from adk_eval_gate.baseline.provenance_changes import ChangedBesidesCode
from adk_eval_gate.baseline.row_notes import EfficiencyNote, RowNote
from adk_eval_gate.core.numbers import STORED_FILE, Count, NonNegative, Unit
from adk_eval_gate.core.schema_versions import COMPARISON_SCHEMA_VERSION

Stability = Literal["stable", "flaky", "broken"]
Verdict = Literal["regressed", "improved", "unchanged", "inconclusive", "new", "removed", "not_comparable", "error"]

# Adaptive runs estimate a change from part of the samples (docs/adaptive-runs.md); baseline and current are then
# the means of those same samples, so that current − baseline is always the delta shown beside them.
ESTIMATE = (
    "Which samples baseline, current and delta are means of: null for every sample; with adaptive runs "
    '"first round vs whole baseline" or "extra runs vs baseline test half".'
)
# A compared row carries its note (baseline/row_notes.py) until gate/reasons.py renders it as its `reason`.
NOTE = "What decided the verdict, as data; never stored (nor in the schema): the file keeps its sentence, `reason`."


class _Model(BaseModel):
    # frozen: a compared row is judged, told and shown as built; whoever changes one builds a new one (model_copy)
    model_config = ConfigDict(**STORED_FILE, frozen=True)


class BaselineIdentity(_Model):
    source: str = Field(description="Where the baseline came from: a file path, a branch entry, an artifact.")
    sha: str | None = Field(description="The commit the baseline results were produced at.")
    created_at: str | None = None
    age_days: NonNegative | None = None
    tool_version: str | None = None
    exact_base: bool = Field(
        default=True,
        description="False when the entry for the PR's merge-base was missing "
        "and the newest baseline was used instead.",
    )


class _Verdicted(_Model):
    """What every compared row carries, whatever it groups: one case, one eval set, or an agent's eval sets pooled."""

    agent: str
    criterion: str
    baseline: float | None
    current: float | None
    delta: float | None
    verdict: Verdict
    reason: str
    note: SkipJsonSchema[RowNote | None] = Field(default=None, exclude=True, description=NOTE)
    p_value: Unit | None = Field(
        default=None,
        description="One-sided p-value in the verdict's direction, "
        "adjusted (Holm) over the pooled and eval-set verdicts that gate.",
    )
    gating: bool = Field(default=False, description="This verdict is one of the conditions that failed the gate.")
    estimate: str | None = Field(default=None, description=ESTIMATE)


class Row(_Verdicted):
    """One case × criterion."""

    eval_set_id: str
    eval_id: str
    p_value: Unit | None = Field(
        default=None,
        description="One-sided p-value in the verdict's direction, "
        "adjusted for the run's many case rows (Benjamini-Hochberg, level gate.case_fdr).",
    )
    baseline_samples: Count = 0
    current_samples: Count = 0
    stability: Stability | None = Field(
        default=None, description="How this case × criterion fared on the default branch (history); null: unknown."
    )
    quarantined: bool = Field(
        default=False, description="Flaky and gate.quarantine is flaky: reported, left out of every gating test."
    )


class _GroupSummary(_Verdicted):
    baseline_pass_rate: Unit | None = None
    current_pass_rate: Unit | None = None
    cases_compared: Count = 0
    unconfirmed: bool = Field(
        default=False,
        description="An inconclusive drop this design could not have confirmed even as a clean break of the cases it "
        "touches: the gate cannot know (gate.unconfirmed decides what it does).",
    )


class Summary(_GroupSummary):
    """One agent × eval set × criterion."""

    eval_set_id: str
    baseline: float | None = Field(description="Mean case score over the cases compared.")
    cases_new: Count = 0
    cases_removed: Count = 0
    cases_not_comparable: Count = 0


class PooledSummary(_GroupSummary):
    """One agent × criterion over all its eval sets, stratified by case: with many small eval sets, the evidence
    no single eval set has. Present only for agents whose criterion was compared in two or more eval sets."""

    baseline: float | None = Field(description="Mean case score over every case compared, in every eval set.")
    eval_sets_compared: Count = 0


EfficiencyMetric = Literal["cost", "latency", "tokens", "tool_calls"]


class EfficiencyRow(_Model):
    """One agent × eval set × usage metric: per-run spend of the current run against the baseline's."""

    agent: str
    eval_set_id: str
    metric: EfficiencyMetric
    baseline: float = Field(description="Mean per run over the cases compared (USD, seconds, tokens, tool calls).")
    current: float
    change: float = Field(description="Relative change of the per-case means, averaged over cases: +0.4 is 40% more.")
    tolerance: float = Field(description="The relative change below which it is never a regression.")
    verdict: Literal["regressed", "improved", "unchanged", "inconclusive"]
    reason: str
    note: SkipJsonSchema[EfficiencyNote | None] = Field(default=None, exclude=True, description=NOTE)
    p_value: Unit | None = Field(default=None, description="One-sided, Holm-adjusted over the efficiency rows.")
    cases_compared: Count = 0
    gating: bool = False


class Override(_Model):
    """Who turned a failing gate into a pass, and how: the override label, or `/eval accept` bound to one commit."""

    kind: Literal["label", "comment"]
    by: str | None = Field(default=None, description="The login that added the label or wrote `/eval accept`.")
    at: str | None = Field(default=None, description="When, as GitHub's server recorded it.")
    label: str | None = None
    reason: str | None = Field(default=None, description="The reason given with `/eval accept`.")
    sha: str | None = Field(default=None, description="The only commit an acceptance applies to.")
    url: str | None = Field(default=None, description="The `/eval accept` comment.")


class GateDecision(_Model):
    verdict: Literal["pass", "fail"]
    reason: str
    failures: list[FailureRecord] = Field(
        default_factory=list, description="Each condition that failed the gate, as data and as its sentence."
    )
    notes: list[NoteRecord] = Field(
        default_factory=list, description="Each regression reported that does not gate, and why, as data."
    )
    overridden: bool = Field(
        default=False, description="The override label or an `/eval accept` turned a failing gate into a pass."
    )
    override: Override | None = None
    fail_on: list[str] = Field(default_factory=list)
    unconfirmed: Count = Field(default=0, description="Drops the design could not confirm (gate.unconfirmed).")
    settle: str | None = Field(default=None, description="What would settle the unconfirmed drops.")


class DriftRow(_Model):
    """One agent × criterion over all its eval sets: this run against the default branch's record `merges` back."""

    agent: str
    criterion: str
    baseline: float | None = Field(description="The reference record's mean case score over the cases compared.")
    current: float | None
    delta: float | None = Field(description="Change in the share of samples at or above the threshold.")
    verdict: Verdict
    reason: str
    note: SkipJsonSchema[RowNote | None] = Field(default=None, exclude=True, description=NOTE)
    p_value: Unit | None = Field(default=None, description="One-sided, Holm-adjusted with the gating verdicts.")
    cases_compared: Count = 0
    gating: bool = False
    dropped_cases: list[str] = Field(
        default_factory=list,
        description="The cases behind a drift: those whose share of passing samples fell since the reference "
        '("agent/eval set/case").',
    )
    began: DriftStart | None = Field(
        default=None,
        description="Where the slide began: the merge a change-point over the history's records from the "
        "reference to the base points to (baseline/drift_start.py); set on rows whose score fell.",
    )


class Trend(_Model):
    """One agent × criterion across the newest default-branch records, oldest first."""

    # not frozen yet: baseline/history/view.py fills it in as it reads the history (left for its owner)
    model_config = ConfigDict(**STORED_FILE, frozen=False)

    agent: str
    criterion: str
    shas: list[str]
    values: list[float | None] = Field(description="Mean case score over the agent's eval sets, per record.")
    sparkline: str
    current: float | None = Field(default=None, description="This run's mean, for the same cases.")


class FlakyCase(_Model):
    agent: str
    eval_set_id: str
    eval_id: str
    criterion: str
    stability: Stability
    passes: Count = Field(description="Runs that passed (each run's own outcome) over the records counted.")
    samples: Count = Field(description="Runs that passed or failed over the records counted.")
    records: Count
    quarantined: bool = False


class HistoryReport(_Model):
    """What the default branch's history adds: drift against an older record, known flaky cases, trends."""

    # not frozen yet: baseline/history/view.py fills it in as it reads the history (left for its owner)
    model_config = ConfigDict(**STORED_FILE, frozen=False)

    source: str
    records: Count
    error: str | None = Field(default=None, description="Why the history could not be used; the gate fails closed.")
    notes: list[str] = Field(default_factory=list)
    reference_sha: str | None = Field(default=None, description="The record the drift gate compared with.")
    reference_date: str | None = None
    merges: Count | None = Field(default=None, description="Records between the reference and the base.")
    since: str | None = Field(default=None, description="The drift reference, as the drift reasons name it.")
    drift: list[DriftRow] = Field(default_factory=list)
    flaky: list[FlakyCase] = Field(default_factory=list, description="Flaky and broken cases, flaky first.")
    trends: list[Trend] = Field(default_factory=list)


class PowerLine(_Model):
    """What one agent's gating verdicts can confirm at the configured alpha (baseline/power.py)."""

    agent: str
    scope: str = Field(description="The eval set, or 'all N eval sets' for the pooled verdict.")
    cases: Count
    runs: str = Field(description="The pull request's runs per case ({min–max} when adaptive), and the baseline's.")
    confirms: Count | None = Field(description="The fewest outright broken cases the gate fails on; null: none.")
    statement: str
    unconfirmed_up_to: float | None = Field(
        default=None,
        description="Drops beyond tolerance up to this many points cannot be confirmed or ruled out (unconfirmed).",
    )


class AgentPower(_Model):
    agent: str
    lines: list[PowerLine]
    family: Count = Field(description="Gating verdicts in the run's Holm family.")
    weak: bool = Field(description="No verdict of this agent can ever fail the gate on a regression.")
    suggestion: str | None = Field(
        default=None,
        description="The num_runs that would give it power, or confirm every drop beyond tolerance; null: none up to "
        "max 20 would (add cases), or nothing is missing.",
    )


def _failures_as_records(data: Any) -> Any:
    """A file of schema_version 1 kept each failure as its sentence alone: read it as a record of that sentence,
    its kind unrecorded (nothing reads a kind out of a sentence)."""
    if not isinstance(data, dict) or data.get("schema_version", 1) != 1 or not isinstance(data.get("gate"), dict):
        return data
    failures = data["gate"].get("failures")
    if not isinstance(failures, list):
        return data
    records = [{"kind": UNRECORDED, "text": f} if isinstance(f, str) else f for f in failures]
    return {**data, "gate": {**data["gate"], "failures": records}}


class Comparison(_Model):
    schema_version: Literal[1, 2] = COMPARISON_SCHEMA_VERSION

    @model_validator(mode="before")
    @classmethod
    def _read_version_1(cls, data: Any) -> Any:
        return _failures_as_records(data)

    verdict: Literal["pass", "fail"]
    run_id: str | None = Field(
        default=None, pattern=r"^[\w.-]{1,80}$", description="The run_id of the results file this compares."
    )
    baseline: BaselineIdentity | None
    warnings: list[str] = Field(default_factory=list)
    gate: GateDecision
    pooled: list[PooledSummary] = Field(
        default_factory=list,
        description="Agent × criterion over all eval sets; "
        "first, because with many small eval sets only they have the evidence.",
    )
    summaries: list[Summary]
    rows: list[Row]
    efficiency: list[EfficiencyRow] = Field(
        default_factory=list,
        description="Per-run usage against the baseline (docs/efficiency-regressions.md); regressions first.",
    )
    history: HistoryReport | None = Field(
        default=None, description="Drift, flaky cases and trends from the default branch's history."
    )
    power: list[AgentPower] = Field(
        default_factory=list, description="Per agent, the smallest drop its gating verdicts can confirm."
    )
    pass_k: list[PassKRow] = Field(
        default_factory=list, description="Per eval set, pass^k against the baseline's (gate.pass_k; docs/pass-k.md)."
    )
    changed: ChangedBesidesCode | None = Field(
        default=None,
        description="What changed between the baseline and this run besides the code (judge model, served model "
        "version, scoring libraries) and what the comparison did about it; the report's first line.",
    )
