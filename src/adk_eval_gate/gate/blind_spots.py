"""What a gate's own settings keep it from seeing, said wherever the verdict is.

A pull request edits its own config: `gate: {fail_on: []}` (or a tolerance no score can exceed) turns the gate
into one that cannot fail, and a green check would then mean nothing. Such settings stay the user's to choose, but
never silently: each blind spot is a warning in the comment, the console, the job log and the step summary.
"""

from __future__ import annotations

from adk_eval_gate.config.workflow_settings import GateSettings

# Scores of ADK's criteria lie in [0, 1]: a tolerance this large lets no drop count.
_BLIND_TOLERANCE = 1.0


def blind_spots(gate: GateSettings) -> tuple[str, ...]:
    """One sentence per way these settings cannot fail the gate, worst first; none for the defaults."""
    fail_on = set(gate.fail_on)
    if not fail_on:
        return ("gate.fail_on is empty: this gate cannot fail — cases that error or regress all pass",)
    said: list[str] = []
    if not fail_on & {"regression", "case_regression", "threshold"}:
        said.append("gate.fail_on has no `regression`: a drop from the baseline passes this gate")
    if "error" not in fail_on:
        said.append("gate.fail_on has no `error`: a case that could not be evaluated (a crash, a judge failure) passes")
    tolerances = gate.tolerance.values() if isinstance(gate.tolerance, dict) else [gate.tolerance]
    if fail_on & {"regression", "case_regression", "drift"} and any(t >= _BLIND_TOLERANCE for t in tolerances):
        said.append(f"gate.tolerance is {_BLIND_TOLERANCE:g} or more: no drop of a 0–1 score can count as a regression")
    return tuple(said)
