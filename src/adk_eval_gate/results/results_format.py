"""The results file: a versioned public contract (`schema_version` 1) that later stages and other tools read.

Its JSON Schema (`results.schema.json`, shipped in this package) is generated from these models; a test
keeps the two in step. Additive changes keep schema_version 1; anything else bumps it.

Every number is finite, and counts, durations and costs are bounded by their types (`core/numbers.py`): a results
file is also a baseline, read back from a store or a fork's artifact.
"""

from __future__ import annotations

from typing import Final, Literal

from pydantic import BaseModel, Field

from adk_eval_gate.core.json_types import JsonObject
from adk_eval_gate.core.numbers import STORED_FILE, Count, Finite, NonNegative, RunCount, Unit
from adk_eval_gate.core.schema_versions import RESULTS_SCHEMA_VERSION
from adk_eval_gate.results.provenance_models import RunProvenance

SCHEMA_VERSION: Final = RESULTS_SCHEMA_VERSION

StatusName = Literal["passed", "failed", "not_evaluated", "error"]
# Why a criterion has no score (criteria.base.Cause): the first four are designed absences (`not_evaluated`), the
# others make it an `error`.
CauseName = Literal[
    "no_credentials",
    "budget_spent",
    "unsupported",
    "not_applicable",
    "judge_unavailable",
    "unparseable_reply",
    "internal_error",
]
_CAUSE = (
    "Why there is no score: no_credentials, budget_spent, unsupported, not_applicable (status not_evaluated); "
    "judge_unavailable, unparseable_reply, internal_error (status error)."
)

# A case the run's spending limit left out: never a pass (docs/adaptive-runs.md, "A budget per run").
CaseStatusName = Literal["passed", "failed", "not_evaluated", "error", "not_run"]


class _Model(BaseModel):
    model_config = STORED_FILE


class InvocationResult(_Model):
    score: Finite | None = Field(description="This turn's score; null when it could not be scored.")
    status: StatusName
    detail: str | None = None
    judgements: list[Unit] | None = Field(
        default=None,
        description="A sampled judge's readable judgements of this turn (0 invalid … 1 valid): the first num_samples, "
        "whose majority is the score, then any re-judging's (docs/judge-noise.md). Null: not a sampled judge.",
    )
    rejudged: Count = Field(default=0, description="How many of the judgements re-judging added.")
    unjudged: str | None = Field(default=None, description="Why re-judging this turn stopped short, when it did.")


class JudgeNoise(_Model):
    """How often the judge disagreed with itself on this case × criterion, over every turn of every run
    (docs/judge-noise.md)."""

    judgements: Count = Field(description="Readable judgements, num_samples' and re-judging's.")
    rejudged: Count = Field(default=0, description="Of those, re-judging's.")
    invocations: Count = Field(description="Turns (over every run) with at least one judgement.")
    pairs: Count = Field(description="Pairs of judgements of the same turn compared.")
    flip_rate: Unit | None = Field(
        description="The chance that two judgements of the same turn disagree (pooled over the pairs); null with "
        "no turn judged twice."
    )
    unjudged: Count = Field(default=0, description="Turns whose re-judging stopped short (budget, failure).")
    unjudged_reason: str | None = None


class RunMetric(_Model):
    run: Count = Field(description="0-based run index.")
    score: Finite | None = Field(
        description="The criterion's overall score for this run, as ADK's evaluator computes it."
    )
    status: StatusName
    per_invocation: list[InvocationResult]
    reason: str | None = None
    cause: CauseName | None = Field(default=None, description=_CAUSE)


class MetricResult(_Model):
    score: Finite | None = Field(
        description="The case's score: the evaluator's overall score with one run; with several runs the mean of "
        "every per-invocation score of every run (ADK AgentEvaluator's pooling)."
    )
    threshold: Finite
    status: StatusName
    per_invocation: list[Finite | None] = Field(description="Per turn, the mean score over runs.")
    runs: list[RunMetric | None] = Field(description="Every run's outcome; null for a run whose agent errored.")
    reason: str | None = Field(default=None, description="Why the criterion was not evaluated or errored, when it was.")
    cause: CauseName | None = Field(default=None, description=_CAUSE)
    judge_noise: JudgeNoise | None = Field(
        default=None, description="A sampled judge's self-disagreement on this case; null for unjudged criteria."
    )


class RunUsage(_Model):
    """What one run of the agent spent, for the efficiency comparison with the baseline."""

    input_tokens: Count = 0
    output_tokens: Count = 0
    model_calls: Count = 0
    tool_calls: Count = 0
    latency_seconds: NonNegative | None = None
    cost_usd: NonNegative | None = Field(
        default=None, description="Agent and user simulator, from the price table; null when a model used has no price."
    )


class RunRecord(_Model):
    run: Count
    error: str | None = None
    duration_seconds: NonNegative | None = None
    usage: RunUsage | None = None
    actual_invocations: list[JsonObject] | None = Field(
        default=None, description="The agent's invocations in ADK's Invocation JSON shape (snake_case)."
    )


class CriterionLook(_Model):
    """How one criterion stood against the baseline when the first round ended."""

    current: Finite | None = Field(description="Mean of the first round's scores.")
    baseline: Finite | None = Field(description="Mean of the baseline's selection half (its first half of runs).")
    p_drop: Unit | None = Field(default=None, description="One-sided p-value of a drop, first round vs that half.")
    undecided: bool


class ExtraRuns(_Model):
    """Why a case of an adaptive agent got runs beyond the first round."""

    round: Count = Field(description="The round that made them (2: the only extra round).")
    runs: list[Count] = Field(description="Their run indices.")
    reason: str
    criteria: dict[str, CriterionLook] = Field(default_factory=dict)


class Sampling(_Model):
    """Adaptive runs: which runs form the first round; later runs are the extra round's (docs/adaptive-runs.md)."""

    first_round_runs: RunCount
    extra: ExtraRuns | None = None
    decided: str | None = Field(default=None, description="Why the case got no extra runs, when it did not.")


class EfficiencyResult(_Model):
    score: Finite | None = Field(
        description="The case's value, as ADK reports it: one run's mean per turn, or with "
        "several runs the mean of every run's per-turn values. Null when nothing reported it."
    )
    per_invocation: list[Finite | None] = Field(description="Per turn, the mean over runs.")


class CaseResult(_Model):
    eval_id: str
    case_hash: str = Field(
        default="",
        description="sha256 of the eval case as written (ids and timestamps aside); "
        "a baseline case with another hash is not comparable.",
    )
    status: CaseStatusName
    reason: str | None = Field(default=None, description="One line: why the case failed, errored or was not evaluated.")
    metrics: dict[str, MetricResult]
    efficiency: dict[str, EfficiencyResult] = Field(
        default_factory=dict,
        description="ADK 2.13's informational efficiency metrics (tool_call_count_v1, "
        "inference_call_count_v1, token_usage_v1, invocation_duration_v1): reported, never passing or failing.",
    )
    runs: list[RunRecord]
    sampling: Sampling | None = Field(default=None, description="Set for adaptive runs (num_runs: {min, max}).")


class CriterionConfig(_Model):
    threshold: Finite
    options: JsonObject
    hash: str = Field(
        default="", description="sha256 of the criterion's name and options; a change makes its rows not comparable."
    )


class Counts(_Model):
    total: Count = 0
    passed: Count = 0
    failed: Count = 0
    not_evaluated: Count = 0
    error: Count = 0
    not_run: Count = Field(default=0, description="Cases left out by run.max_cost_usd.")


class RunRange(_Model):
    min: RunCount
    max: RunCount


class EvalSetResult(_Model):
    agent: str
    eval_set_id: str
    file: str = Field(description="The eval set file, relative to the config file's directory.")
    shape: Literal["evalset", "legacy_turns", "legacy_named", "agents_cli"]
    criteria_source: str = Field(description='"inline", "default" or the eval config file it came from.')
    criteria: dict[str, CriterionConfig]
    num_runs: RunCount = Field(description="Runs per case; with adaptive runs, the most any case could get (max).")
    adaptive_runs: RunRange | None = Field(default=None, description="num_runs: {min, max} when runs were adaptive.")
    target: str
    summary: Counts
    cases: list[CaseResult]


class ToolInfo(_Model):
    name: Literal["adk-eval-gate"] = "adk-eval-gate"
    version: str
    adk_semantics: str = Field(description="The google-adk release whose scoring rules these numbers follow.")


class GitInfo(_Model):
    sha: str | None = None
    ref: str | None = None


class Timings(_Model):
    started_at: str
    finished_at: str
    duration_seconds: NonNegative
    inference_seconds: NonNegative
    scoring_seconds: NonNegative


class JudgeCounts(_Model):
    calls: Count = 0
    cache_hits: Count = 0
    failures: Count = 0
    input_tokens: Count = 0
    output_tokens: Count = 0
    cost_usd: NonNegative | None = Field(
        default=0.0, description="Estimated from the price table; null when a model used has no price."
    )
    unpriced_models: list[str] = Field(default_factory=list)


class JudgeUsage(JudgeCounts):
    by_criterion: dict[str, JudgeCounts] = Field(default_factory=dict)


class ModelTokens(_Model):
    calls: Count = 0
    input_tokens: Count = 0
    output_tokens: Count = 0


class AgentUsage(_Model):
    """What the agent under test spent (its events' usage metadata) and what simulating its users cost."""

    model_calls: Count = 0
    input_tokens: Count = 0
    output_tokens: Count = 0
    cost_usd: NonNegative | None = Field(
        default=0.0, description="Estimated from the price table; null when a model used has no price."
    )
    unpriced_models: list[str] = Field(default_factory=list)
    by_model: dict[str, ModelTokens] = Field(default_factory=dict)
    user_simulator: JudgeCounts | None = None


class Budget(_Model):
    max_cost_usd: NonNegative
    spent_usd: NonNegative = Field(description="Estimated spend of agents, judges and user simulator.")
    not_run: Count = Field(default=0, description="Cases left out because the limit was reached.")
    unpriced_models: list[str] = Field(
        default_factory=list, description="Models without a price: their spend is unknown and not counted."
    )


class ResultsFile(_Model):
    schema_version: Literal[1] = SCHEMA_VERSION
    tool: ToolInfo
    git: GitInfo
    config_file: str
    run_id: str | None = Field(
        default=None,
        pattern=r"^[\w.-]{1,80}$",
        description="Names this run: the files written from it (comparison.json, report.md, report.html, junit.xml) "
        "carry it, and no command combines files of different runs. In GitHub Actions it starts with the workflow "
        "run's id and attempt, which the shards of one run share.",
    )
    interrupted: bool = Field(
        default=False, description="True when the run stopped early; unfinished cases are listed as errors."
    )
    stop_reason: str | None = Field(
        default=None, description="Why the run stopped early: a signal or the job time limit."
    )
    budget: Budget | None = Field(default=None, description="run.max_cost_usd and what the run spent against it.")
    timings: Timings
    judge: JudgeUsage = Field(
        default_factory=JudgeUsage, description="LLM judge calls, cache hits and tokens of this run."
    )
    agent_usage: dict[str, AgentUsage] = Field(
        default_factory=dict, description="Per agent: model tokens and user-simulator calls."
    )
    offline: str | None = Field(
        default=None,
        description="Set, to what it means, when the agents' model was played from the eval set's expected turns "
        "(`--offline`): such results test tools, wiring and scoring, not the model, and are never a baseline.",
    )
    provenance: RunProvenance | None = Field(
        default=None,
        description="What scored the run besides the code: judge models, the agents' served model versions, the "
        "scoring libraries' versions (results/provenance_models.py); null in files written before it was recorded.",
    )
    summary: Counts
    eval_sets: list[EvalSetResult]
