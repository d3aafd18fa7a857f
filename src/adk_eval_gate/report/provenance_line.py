"""What changed besides the code (judge, served model, scoring libraries), as the one line that leads the PR
comment and the console summary: a change of what scores must never read as the code's."""

from __future__ import annotations

from adk_eval_gate.baseline.provenance_changes import ChangedBesidesCode, ProvenanceChange

_WHAT = {"judge": "judge of {}", "served_model": "{}'s served model", "scorer": "{}"}


def _change(change: ProvenanceChange) -> str:
    return f"{_WHAT[change.kind].format(change.subject)} {change.baseline} → {change.current}"


def _handling(changed: ChangedBesidesCode) -> str:
    criteria = ", ".join(changed.criteria)
    if changed.handling == "rescored":
        return (
            f"the baseline's stored invocations were re-scored with today's judge and scorers ({criteria}): "
            "compared like for like"
        )
    if changed.handling == "not_comparable":
        every = "every criterion" if "*" in changed.criteria else criteria
        return f"scores of {every} are not comparable with the baseline and were not compared; {changed.fix}"
    return "scores were compared as usual (a new model behind the agent is the agent's change)"


def changed_line(changed: ChangedBesidesCode | None) -> str | None:
    """The line, or None when nothing but the code changed (or the baseline predates provenance)."""
    if changed is None or not changed.changes:
        return None
    return f"Changed besides the code: {'; '.join(_change(c) for c in changed.changes)} — {_handling(changed)}."
