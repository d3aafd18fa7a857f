"""The pass^k gate's part of the decision (`gate.pass_k`, docs/pass-k.md): which eval sets' rows fail the gate.

A significant drop beyond the tolerance fails it; so does an eval set whose pass^k cannot be estimated (a case
with fewer than k runs on a side, or no case to compare): what could not be evaluated is never a pass.
"""

from __future__ import annotations

from collections.abc import Sequence

from adk_eval_gate.baseline.pass_k_compare import pass_k_rows
from adk_eval_gate.baseline.pass_k_models import PassKRow
from adk_eval_gate.config.workflow_settings import GateSettings
from adk_eval_gate.gate.outcome import Failure
from adk_eval_gate.results.results_format import ResultsFile


def gates(row: PassKRow) -> bool:
    return row.verdict in ("dropped", "not_estimable")


def gated_pass_k(current: ResultsFile, baseline: ResultsFile | None, gate: GateSettings) -> tuple[PassKRow, ...]:
    """The rows of `gate.pass_k`, each marked `gating` when it fails the gate; none when it is unset."""
    if gate.pass_k is None:
        return ()
    rows = pass_k_rows(current, baseline, gate.pass_k.k, gate.pass_k.tolerance, gate.alpha)
    return tuple(row.model_copy(update={"gating": gates(row)}) for row in rows)


def pass_k_failures(rows: Sequence[PassKRow]) -> list[Failure]:
    """One failure per gating row; its detail is the row's own reason."""
    return [Failure(kind="pass_k", detail=f"{row.agent}/{row.eval_set_id} {row.reason}") for row in rows if row.gating]
