"""The workflow config (one YAML file), validated once into typed settings.

Unknown keys are errors at every level: a typo must fail loudly, never pass a gate silently.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import Field, field_validator, model_validator

from adk_eval_gate.config.history import (
    DriftSettings,
    HistorySection,
    PassKSettings,
    QuarantineMode,
    quarantine_value,
)
from adk_eval_gate.config.strict_section import CommentKey
from adk_eval_gate.config.strict_section import Strict as _Strict
from adk_eval_gate.config.target_settings import TargetSettings
from adk_eval_gate.core.json_types import JsonObject
from adk_eval_gate.core.redaction import check_pass_env

NAME_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$"


class RunSection(_Strict):
    concurrency: int = Field(default=16, ge=1, le=512)
    timeout: float = Field(default=600.0, gt=0, description="seconds per case and run")
    retries: int = Field(default=2, ge=0, le=10, description="extra attempts after a transient error")
    job_timeout: float | None = Field(
        default=None, gt=0, description="seconds for the whole run; unfinished cases become errors"
    )
    workers: int | Literal["auto"] = Field(
        default="auto",
        description="processes for in-process (adk) agents; auto uses every core when the suite is large",
    )
    max_cost_usd: float | None = Field(
        default=None,
        gt=0,
        description="spending limit of the whole run (agents, judges, user simulator), from the price "
        "table; work that would start past it is not run",
    )
    rejudge: int = Field(
        default=5,
        ge=0,
        le=100,
        description="extra judgements for a judged turn whose num_samples judgements disagree, to measure the "
        "judge's noise (docs/judge-noise.md); within max_cost_usd; 0: never re-judge",
    )

    @field_validator("workers")
    @classmethod
    def _workers(cls, value: int | str) -> int | str:
        if isinstance(value, int) and not 1 <= value <= 64:
            raise ValueError(f"{value} workers is out of range; use 1-64 or auto")
        return value


class AdaptiveRuns(_Strict):
    """`num_runs: {min: 2, max: 8}`: every case runs `min` times; on a pull request, cases whose comparison with the
    baseline is still undecided get the rest up to `max` (docs/adaptive-runs.md)."""

    min: int = Field(ge=1, le=100)
    max: int = Field(ge=2, le=100)

    @model_validator(mode="after")
    def _ordered(self) -> AdaptiveRuns:
        if self.max <= self.min:
            raise ValueError(
                f"max ({self.max}) must be above min ({self.min}); for a fixed count write num_runs: {self.min}"
            )
        return self


class AgentSettings(_Strict):
    name: Annotated[str, Field(pattern=NAME_PATTERN)]
    target: TargetSettings
    evalsets: list[str] = Field(min_length=1)
    criteria: JsonObject | None = None
    eval_config: str | None = None
    # Pass/fail for agents-cli metrics, which carry no threshold of their own (docs/agents-cli.md).
    thresholds: JsonObject | None = None
    num_runs: int | AdaptiveRuns = Field(default=1)

    @field_validator("num_runs", mode="before")
    @classmethod
    def _runs(cls, value: Any) -> int | AdaptiveRuns:
        shapes = "use a count 1-100, or {min: 2, max: 8} for adaptive runs"
        if isinstance(value, dict):
            if set(value) != {"min", "max"} or not all(type(v) is int for v in value.values()):
                raise ValueError(f"{value!r} is not a run range; {shapes}")
            if not 1 <= value["min"] < value["max"] <= 100:
                raise ValueError(f"min {value['min']}, max {value['max']}: need 1 <= min < max <= 100; {shapes}")
            return AdaptiveRuns(**value)
        if type(value) is not int or not 1 <= value <= 100:
            raise ValueError(f"{value!r} is not a run count; {shapes}")
        return value

    @field_validator("evalsets", mode="before")
    @classmethod
    def _one_or_many(cls, value: Any) -> Any:
        return [value] if isinstance(value, str) else value

    @model_validator(mode="after")
    def _one_criteria_source(self) -> AgentSettings:
        if self.criteria is not None and self.eval_config is not None:
            raise ValueError(
                "`criteria` and `eval_config` both given; keep one (inline criteria or ADK's eval_config.json)"
            )
        return self


class FileBaseline(_Strict):
    """A results file committed in the repository; `adk-eval-gate baseline update` rewrites it."""

    store: Literal["file"]
    path: str = Field(min_length=1)


class BranchBaseline(_Strict):
    """A data branch written through the contents API on pushes to the default branch: one file per commit
    plus a `latest` pointer."""

    store: Literal["branch"]
    branch: str = Field(default="adk-eval-gate-data", min_length=1)
    directory: str = Field(default="baselines", min_length=1)
    max_age_days: float = Field(default=14.0, gt=0, description="older baselines carry a staleness warning")


class ArtifactBaseline(_Strict):
    """The results artifact of the base branch's newest push run that has it, whatever its conclusion (Actions API)."""

    store: Literal["artifact"]
    name: str = Field(default="adk-eval-gate-results", min_length=1)
    workflow: str | None = Field(default=None, description="workflow file name or id; any workflow when unset")
    max_age_days: float = Field(default=14.0, gt=0)


class NoBaseline(_Strict):
    store: Literal["none"]


BaselineSettings = Annotated[
    FileBaseline | BranchBaseline | ArtifactBaseline | NoBaseline, Field(discriminator="store")
]


def max_age_days(baseline: BaselineSettings) -> float | None:
    """How old a stored baseline may be before the comparison warns; None for a committed file or no store, whose
    age is the repository's own business."""
    return baseline.max_age_days if isinstance(baseline, (BranchBaseline, ArtifactBaseline)) else None


GateCondition = Literal[
    "regression",
    "case_regression",
    "threshold",
    "error",
    "not_evaluated",
    "inconclusive",
    "not_comparable",
    "no_baseline",
    "cost_regression",
    "latency_regression",
    "token_regression",
    "tool_call_regression",
    "drift",
]

EFFICIENCY_DEFAULTS = {"cost": 0.20, "latency": 0.50, "tokens": 0.20, "tool_calls": 0.25}


def _relative(key: str, value: Any) -> float:
    """ "+20%" (or 0.2) → 0.2: the relative increase below which a usage change is never a regression."""
    text = value.strip() if isinstance(value, str) else None
    if text is not None and re.fullmatch(r"\+?\d+(\.\d+)?%", text):
        number = float(text.lstrip("+").rstrip("%")) / 100
    elif type(value) in (int, float) and not isinstance(value, bool):
        number = float(value)
    else:
        raise ValueError(f'{key}: {value!r} is not a relative tolerance; write it like "+20%"')
    if not 0 <= number <= 100:
        raise ValueError(f"{key}: {value!r} is out of range; use +0% to +10000%")
    return number


def _default_fail_on() -> list[GateCondition]:
    return ["regression", "error", "drift"]


class GateSettings(_Strict):
    fail_on: list[GateCondition] = Field(default_factory=_default_fail_on)
    # Changes smaller than this (in score units) are never regressions or improvements; per criterion allowed.
    tolerance: float | dict[str, float] = 0.05
    alpha: float = Field(
        default=0.01, gt=0, lt=0.5, description="false-alarm budget for the whole run's eval-set verdicts"
    )
    case_fdr: float = Field(default=0.05, gt=0, lt=0.5, description="false discovery rate for the per-case rows")
    min_pass_rate: float | None = Field(default=None, ge=0, le=1)
    # Relative increases of per-run usage below these are never efficiency regressions: {cost: "+20%", ...}.
    efficiency_tolerance: dict[str, float] = Field(default_factory=lambda: dict(EFFICIENCY_DEFAULTS))
    # On a pull request the base branch's copy of this setting counts, never the pull request's (handshake/trusted.py).
    override_label: str | None = "adk-eval-gate: accept regression"
    # A push to the default branch stores the baseline; failing that job would not stop the push, only hide the
    # baseline's progress behind a red mark, so by default it passes (the comparison is still reported).
    on_push: Literal["pass", "fail"] = "pass"
    # fail, or warn visibly: where the gate cannot know (docs/pooled-verdicts.md, "Power"), it must not say pass
    unconfirmed: Literal["fail", "warn"] = Field(default="fail", description="what an unconfirmed drop does")
    drift: DriftSettings = Field(default_factory=DriftSettings)
    pass_k: PassKSettings | None = None  # gate on pass^k too (docs/pass-k.md); unset: reported, never gating
    # Flaky cases (known from the history) stay reported but out of every gating test and condition.
    quarantine: QuarantineMode = None

    @field_validator("quarantine", mode="before")
    @classmethod
    def _quarantine(cls, value: Any) -> Any:
        return quarantine_value(value)

    @field_validator("override_label")
    @classmethod
    def _label(cls, value: str | None) -> str | None:
        if value is not None and not value.strip():
            raise ValueError(
                "is empty, so no label could ever override the gate; name a label, or null for no override"
            )
        return value

    @field_validator("tolerance")
    @classmethod
    def _tolerance(cls, value: float | dict[str, float]) -> float | dict[str, float]:
        for key, number in value.items() if isinstance(value, dict) else [(None, value)]:
            if not 0 <= number <= 1:  # NaN too
                where = f"{key}: " if key is not None else ""  # which of the per-criterion tolerances
                raise ValueError(f"{where}{number!r} is outside [0, 1]; use a score difference such as 0.05")
        return value

    @field_validator("efficiency_tolerance", mode="before")
    @classmethod
    def _efficiency(cls, value: Any) -> dict[str, float]:
        if not isinstance(value, dict):
            raise ValueError('write a mapping such as {cost: "+20%", latency: "+50%"}')
        unknown = sorted(set(value) - set(EFFICIENCY_DEFAULTS))
        if unknown:
            raise ValueError(f"unknown usage metric {unknown[0]!r}; use {', '.join(EFFICIENCY_DEFAULTS)}")
        return {**EFFICIENCY_DEFAULTS, **{key: _relative(key, v) for key, v in value.items()}}

    def tolerance_for(self, criterion: str) -> float:
        if isinstance(self.tolerance, dict):
            return self.tolerance.get(criterion, self.tolerance.get("default", 0.05))
        return self.tolerance


class ModelPrice(_Strict):
    input: float = Field(ge=0, description="USD per million input tokens")
    output: float = Field(ge=0, description="USD per million output tokens (thinking included)")


class JudgeSection(_Strict):
    """The LLM judge's client: one bounded pool for every judge call of a run."""

    cache: str | None = Field(
        default=".adk-eval-gate/cache",
        description="response cache directory (null: none); relative to the config file; restore it with actions/cache",
    )
    concurrency: int = Field(default=16, ge=1, le=256)
    timeout: float = Field(default=60.0, gt=0, description="seconds per judge call")
    retries: int = Field(default=4, ge=0, le=10, description="extra attempts after 408/429/5xx or a timeout")
    max_calls: int | None = Field(default=None, ge=1, description="budget: judge calls allowed in one run")
    max_tokens: int | None = Field(
        default=None, ge=1, description="budget: judge tokens (input + output) allowed in one run"
    )
    templates: str | None = Field(
        default=None,
        description="a directory of prompt templates (<criterion>.j2) that override "
        "the built-in ones; relative to the config file",
    )
    prices: dict[str, ModelPrice] = Field(
        default_factory=dict,
        description="USD per million tokens by model name (prefix match), added to the built-in Gemini list prices",
    )
    base_url: str | None = Field(
        default=None, description="the Gemini API endpoint (default: GOOGLE_GEMINI_BASE_URL or Google's)"
    )

    @field_validator("base_url")
    @classmethod
    def _url(cls, value: str | None) -> str | None:
        if value is not None and not re.fullmatch(r"https?://[^\s/?#]+\S*", value):
            raise ValueError(
                f"{value!r} is not an http(s) URL; write it like https://generativelanguage.googleapis.com"
            )
        return value


class ReportSection(_Strict):
    templates: str | None = Field(
        default=None, description="a directory whose comment.md.j2 overrides the built-in one"
    )
    # A named check run that branch protection can require (needs `checks: write`).
    check_run: bool = False
    check_name: str = Field(default="adk-eval-gate", min_length=1, max_length=100)


class CommentSection(_Strict):
    """The sticky pull-request comment, with the options of the common sticky-comment actions."""

    key: CommentKey | None = Field(
        default=None, description="one comment per key (default: the config's path relative to the repository root)"
    )
    mode: Literal["update", "recreate"] = Field(default="update", description="recreate deletes ours and posts anew")
    when: Literal["always", "changed", "failing"] = Field(
        default="always",
        description="changed: only when the report's content differs from ours; failing: only when the "
        "gate fails (an existing comment is still updated once it passes)",
    )
    author: str | None = Field(
        default=None,
        min_length=1,
        description="the login the token posts as, when GitHub "
        "cannot say: another App's installation token (`<app-slug>[bot]`); on a pull request it is read from the "
        "base branch's copy of this file, never the pull request's",
    )
    progress: bool = Field(
        default=True,
        description="when a pull request's run starts, edit our comment to say which commit is being evaluated "
        "(one request; a pull request without our comment gets none)",
    )


class Settings(_Strict):
    version: Literal[1] = 1
    # Commands run (in the config's directory) before any agent, e.g. `pip install -r requirements.txt`.
    setup: list[str] = Field(default_factory=list)
    setup_pass_env: list[str] = Field(
        default_factory=list,
        description="no longer accepted: no config hands GitHub's tokens to the setup commands (docs/trust.md); "
        "every other variable reaches them anyway",
    )
    run: RunSection = Field(default_factory=RunSection)
    judge: JudgeSection = Field(default_factory=JudgeSection)
    report: ReportSection = Field(default_factory=ReportSection)
    comment: CommentSection = Field(default_factory=CommentSection)
    # The default works with a workflow's default token plus `actions: read`: pushes to the default branch upload
    # their results.json as an artifact, pull requests read it (README quick start); `store: none` opts out.
    baseline: BaselineSettings = Field(default_factory=lambda: ArtifactBaseline(store="artifact"))
    gate: GateSettings = Field(default_factory=GateSettings)
    history: HistorySection = Field(default_factory=HistorySection)
    agents: list[AgentSettings] = Field(min_length=1)

    @field_validator("setup_pass_env")
    @classmethod
    def _setup_pass_env(cls, names: list[str]) -> list[str]:
        return check_pass_env(names)

    @model_validator(mode="after")
    def _unique_agent_names(self) -> Settings:
        seen: set[str] = set()
        for agent in self.agents:
            if agent.name in seen:
                raise ValueError(f"two agents are named {agent.name!r}; give each agent a unique name")
            seen.add(agent.name)
        return self


def is_glob(pattern: str) -> bool:
    return bool(re.search(r"[*?\[]", pattern))
