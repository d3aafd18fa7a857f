"""The pass^k comparison as the comparison file stores it (`Comparison.pass_k`): one row per eval set."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from adk_eval_gate.core.numbers import STORED_FILE, Count, Unit

PassKVerdict = Literal["dropped", "unchanged", "not_estimable"]


class PassKRow(BaseModel):
    """One eval set's pass^k, baseline against pull request (`gate.pass_k`; docs/pass-k.md)."""

    model_config = STORED_FILE

    agent: str
    eval_set_id: str
    k: Count
    baseline: Unit | None = Field(description="The baseline's pass^k: the mean over cases of C(c,k)/C(n,k).")
    baseline_interval: tuple[Unit, Unit] | None = Field(default=None, description="Its 95% interval over cases.")
    current: Unit | None
    current_interval: tuple[Unit, Unit] | None = None
    delta: float | None = Field(default=None, description="Mean per-case change in pass^k over the cases compared.")
    p_value: Unit | None = Field(default=None, description="One-sided, Holm-adjusted over the eval sets' tests.")
    cases_compared: Count = 0
    verdict: PassKVerdict = Field(
        description="dropped: beyond gate.pass_k.tolerance and significant; not_estimable: a side has a case with "
        "fewer than k runs, or no case to compare (the gate fails closed)."
    )
    reason: str
    gating: bool = False
