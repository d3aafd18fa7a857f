"""The `history:` section and the drift settings of `gate:` (docs/history-and-drift.md)."""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import Field, field_validator, model_validator

from adk_eval_gate.config.strict_section import Strict


class FlakySettings(Strict):
    """Over its last `records` records, a case × criterion is flaky when its runs disagreed with themselves
    (`results.flakiness`); with at least `min_samples` runs it is broken when every run failed. `gate.quarantine`
    takes out a flaky one only when its share of passing runs, over at least `min_samples` runs, is in [low, high]."""

    low: float = Field(default=0.2, ge=0, le=1)
    high: float = Field(default=0.8, ge=0, le=1)
    min_samples: int = Field(default=5, ge=1, le=100_000)
    records: int = Field(default=20, ge=1, le=10_000, description="how many of the newest records count")

    @model_validator(mode="after")
    def _ordered(self) -> FlakySettings:
        if self.low >= self.high:
            raise ValueError(f"low ({self.low:g}) must be below high ({self.high:g}); e.g. {{low: 0.2, high: 0.8}}")
        return self


class HistorySection(Strict):
    """A bounded record of every default-branch run, kept where the baseline is kept."""

    enabled: bool = True
    max_records: int = Field(default=200, ge=2, le=10_000, description="older records are dropped")
    trend: int = Field(default=10, ge=2, le=50, description="records shown in the comment's trend")
    flaky: FlakySettings = Field(default_factory=FlakySettings)


class DriftSettings(Strict):
    """Compare the pull request with the default branch `window` records ago too, or with a pinned record."""

    window: int = Field(default=10, ge=1, le=10_000)
    reference: str | None = Field(default=None, description="a commit sha in the history (7-40 hex digits)")

    @field_validator("reference")
    @classmethod
    def _sha(cls, value: str | None) -> str | None:
        if value is not None and not re.fullmatch(r"[0-9a-f]{7,40}", value):
            raise ValueError(f"{value!r} is not a commit sha; write 7-40 lowercase hex digits, or null for the window")
        return value


class PassKSettings(Strict):
    """`gate.pass_k`: gate on pass^k, the chance that a case passes k runs in a row (docs/pass-k.md). Set, it
    compares each eval set's pass^k with the baseline's and fails the gate on a significant drop beyond
    `tolerance` (at `gate.alpha`); an eval set whose cases have fewer than k runs cannot be estimated and fails
    closed. Unset (the default): pass^k is reported, never gating."""

    k: int = Field(ge=1, le=100, description="runs in a row; every case needs at least k runs a side (num_runs)")
    tolerance: float = Field(default=0.05, ge=0, le=1, description="drops in pass^k up to this never fail")


def quarantine_value(value: object) -> Any:
    """`quarantine: false` / `none` / null all mean off; YAML reads a bare `off` as false too."""
    if value is None or value is False or value == "none":
        return None
    if value != "flaky":
        raise ValueError(f"{value!r} is not a quarantine mode; use flaky, or none")
    return value


QuarantineMode = Literal["flaky"] | None
