"""The history's records: one compact record per default-branch run, oldest first, bounded by
`history.max_records`. Stored in `history.db` (`database.py`: a case and each of its states once);
as JSON (`schema_version` 3; 2 before pass^k tallies, 1 before agents-cli metrics were recorded) they are what
earlier versions stored as history.json and what `history show --json` prints. Its JSON Schema ships as
`history.schema.json` beside this module and is generated from these models (`adk-eval-gate schema history`); a
test keeps the two in step.

A record keeps what later comparisons need and no more: per agent × eval set × criterion the mean, pass rate and
sample count; per eval set the mean cost and latency of a run; per case and criterion `[mean, passes, samples]`,
where `passes` counts the samples at or above the criterion's threshold (what the drift gate's stratified test runs
on); and each run's own pass/fail per case and criterion (what the flaky and broken labels run on:
`results.flakiness`), as `[runs passed, runs]` only where the sample counts do not already say it — one-turn runs,
most cases, cost nothing. An eval set recorded by an earlier version (`run_outcomes` false) carries none: it counts
for drift, not for the labels.

Every number is finite and bounded by its type (`core/numbers.py`): a history comes from a store others can
write, and a NaN threshold or a forged sample count must be refused, not silently disable drift or exhaust memory.
"""

from __future__ import annotations

from typing import Annotated, Final, Literal

from pydantic import BaseModel, Field, model_validator

from adk_eval_gate.core.numbers import (
    MAX_RECORD_SAMPLES,
    MAX_RUNS,
    STORED_FILE,
    Count,
    Finite,
    NonNegative,
    RunCount,
    SampleCount,
    Unit,
)
from adk_eval_gate.core.schema_versions import HISTORY_SCHEMA_VERSION

FORMAT: Final = "adk-eval-gate history"  # Final: the models' Literal fields take it as their default
HASH_LENGTH = 16  # hex digits of a case's or criterion's sha256 kept: enough to tell an edit, compact on disk

# The most records `history.max_records` keeps (config/history.py).
MAX_RECORDS = 10_000
# A case's mean is Finite, not Unit: an agents-cli metric scores on its own scale (`CriterionRecord.own_scale`);
# the means of every other criterion are held to [0, 1] by `EvalSetRecord._unit_means`.
CaseScore = tuple[Finite, SampleCount, SampleCount]
RunsOfCase = Annotated[int, Field(ge=0, le=MAX_RUNS)]  # one commit's runs of one case
RunCounts = tuple[RunsOfCase, RunsOfCase]
RecordSamples = Annotated[int, Field(ge=0, le=MAX_RECORD_SAMPLES)]


class _Model(BaseModel):
    model_config = STORED_FILE


class CriterionRecord(_Model):
    threshold: Finite
    config_hash: str = Field(max_length=64, description="The criterion's configuration hash, shortened.")
    mean: Finite | None = Field(description="Mean case score over the cases scored (in [0, 1] unless `own_scale`).")
    pass_rate: Unit | None = Field(description="Share of those cases whose criterion passed.")
    samples: RecordSamples = Field(description="Every run × invocation score of every case.")
    cases: Count
    own_scale: bool = Field(
        default=False,
        exclude_if=lambda own: not own,  # a record of ADK criteria reads as it did before (schema_version 1)
        description="An agents-cli metric: its scores are on the metric's own scale (a 1–5 rubric, a custom "
        "metric's number), so its means are compared as means (drift) and its passes count only where the "
        "config gives it a threshold.",
    )

    @model_validator(mode="after")
    def _unit_mean(self) -> CriterionRecord:
        if not self.own_scale and self.mean is not None and not 0 <= self.mean <= 1:
            raise ValueError(f"mean {self.mean!r} is outside [0, 1] for a criterion not on its own scale")
        return self


class CaseRecord(_Model):
    case_hash: str = Field(max_length=64, description="The eval case's hash, shortened: an edit starts it afresh.")
    scores: dict[str, CaseScore] = Field(
        description="Per criterion [mean score, samples at or above the threshold, samples]."
    )
    runs: dict[str, RunCounts] = Field(
        default_factory=dict,
        exclude_if=lambda runs: not runs,  # most cases: the record stays as compact as it was
        description="Per criterion [runs that passed, runs that passed or failed]: each run's own outcome, however "
        "many turns it has; left out where it equals [passes, samples] of `scores` (every run one turn). Read only "
        "when the eval set's `run_outcomes` is true.",
    )

    pass_k: RunCounts | None = Field(
        default=None,
        exclude_if=lambda tally: tally is None,  # records of earlier versions (schema_version 2) carry none
        description="[runs in which every criterion with a threshold passed, runs with an outcome]: what pass^k "
        "is estimated from (baseline/pass_k.py); absent for a case without a threshold and in earlier records.",
    )

    @model_validator(mode="after")
    def _counts(self) -> CaseRecord:
        for name, (_, passes, samples) in self.scores.items():
            if passes > samples:
                raise ValueError(f"scores.{name}: {passes} passes out of {samples} samples")
        for name, (passed, runs) in self.runs.items():
            if passed > runs:
                raise ValueError(f"runs.{name}: {passed} passed out of {runs} runs")
        if self.pass_k is not None and self.pass_k[0] > self.pass_k[1]:
            raise ValueError(f"pass_k: {self.pass_k[0]} passed out of {self.pass_k[1]} runs")
        return self


class EvalSetRecord(_Model):
    agent: str
    eval_set_id: str
    num_runs: RunCount
    run_outcomes: bool = Field(
        default=False,
        description="Its cases' run outcomes are kept (`cases.*.runs`); false in records of earlier versions, which "
        "then say nothing about flakiness.",
    )
    cost_usd: NonNegative | None = Field(default=None, description="Mean agent cost of one run of a case.")
    latency_seconds: NonNegative | None = Field(default=None, description="Mean latency of one run of a case.")
    criteria: dict[str, CriterionRecord]
    cases: dict[str, CaseRecord]

    @model_validator(mode="after")
    def _unit_means(self) -> EvalSetRecord:
        # Only a criterion the record says is on its own scale may leave [0, 1]; a case of a criterion the record
        # does not name is held to [0, 1] too (nothing says otherwise).
        for eval_id, case in self.cases.items():
            for name, (mean, _, _) in case.scores.items():
                known = self.criteria.get(name)
                if not (known is not None and known.own_scale) and not 0 <= mean <= 1:
                    raise ValueError(f"cases.{eval_id}.scores.{name}: mean {mean!r} is outside [0, 1]")
        return self


ShortText = Annotated[str, Field(max_length=400)]


class RecordProvenance(_Model):
    """A run's provenance (results/provenance_models.py) in short: what `history show` and the page mark where it
    changed from the record before."""

    judges: dict[str, ShortText] = Field(
        default_factory=dict, description="Per judged criterion: its judge model, and the versions that answered."
    )
    models: dict[str, ShortText] = Field(default_factory=dict, description="Per agent: its served model versions.")
    scorers: dict[str, ShortText | None] = Field(
        default_factory=dict, description="The scoring libraries' versions (adk_eval_gate, google_adk, ...)."
    )


class HistoryRecord(_Model):
    sha: str = Field(min_length=1, max_length=64)
    date: str = Field(description="When the run finished (ISO 8601).")
    tool_version: str
    eval_sets: list[EvalSetRecord]
    provenance: RecordProvenance | None = Field(
        default=None,
        exclude_if=lambda p: p is None,  # a record of an earlier version reads as it did
        description="What scored the run besides the code (schema_version 3): judges, served models, scorers.",
    )

    @model_validator(mode="after")
    def _bounded(self) -> HistoryRecord:
        # Each case's count is bounded by its type; the whole record is too, since the drift test expands them all.
        total = sum(samples for s in self.eval_sets for c in s.cases.values() for _, _, samples in c.scores.values())
        if total > MAX_RECORD_SAMPLES:
            raise ValueError(f"{total} samples in one record, over the {MAX_RECORD_SAMPLES} a run can produce")
        return self


class History(_Model):
    """The default branch's history as JSON (schema_version 3; 2, without pass^k tallies or provenance, and 1,
    without agents-cli metrics, are still read): what `adk-eval-gate history show --json` prints and what earlier
    versions stored as history.json. The stores keep it as history.db, a SQLite database (its own schema_version 4,
    2 and 3 still read, in its `meta` table; tables meta,
    records, names, cases, states: docs/history-and-drift.md), in which a case and each of its distinct records are
    stored once; an old history.json is read and migrated."""

    schema_version: Literal[1, 2, 3] = HISTORY_SCHEMA_VERSION
    format: Literal["adk-eval-gate history"] = FORMAT
    repository: str | None = Field(description="owner/name it was written in; another repository's is refused.")
    config: str = Field(description="The config it belongs to, relative to the repository root.")
    records: list[HistoryRecord] = Field(
        max_length=MAX_RECORDS, description="Oldest first; one per default-branch commit."
    )

    @model_validator(mode="after")
    def _one_record_per_commit(self) -> History:
        # A second record of a commit is never written (a re-run replaces the first where it stands): read as one,
        # a copy of the base's record placed first would move the base to the oldest record and drift off.
        seen: dict[str, int] = {}
        for at, record in enumerate(self.records):
            if record.sha in seen:
                raise ValueError(
                    f"records[{at}] is a second record of the commit {record.sha!r} (records[{seen[record.sha]}])"
                )
            seen[record.sha] = at
        return self
