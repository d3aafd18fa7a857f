"""The gate's decision as the sentences people read: the headline reason, one line per failing condition, the
clause a regression that does not gate carries, and the note of an override. Nowhere else does the decision
become prose; `gate/comparison_file.py` stores each sentence beside the data it was made from, so no reader of the
comparison file ever has to take a sentence apart.
"""

from __future__ import annotations

from collections.abc import Mapping

from adk_eval_gate.baseline.comparison_format import Override
from adk_eval_gate.baseline.decision_records import UNRECORDED, FailureRecord, Subject
from adk_eval_gate.core.clip import short_sha
from adk_eval_gate.gate.outcome import Decision, Failure, NotGating
from adk_eval_gate.gate.reasons import settle_text

_VERDICT_KINDS = {
    "regression": "regression",
    "case_regression": "case regression",
    "unconfirmed": "unconfirmed",
    "inconclusive": "inconclusive",
    "not_comparable": "not comparable",
}
_CASE_KINDS = {"below_threshold": "below threshold", "error": "error", "not_run": "not run"}
_LABELS = {
    **_VERDICT_KINDS,
    **_CASE_KINDS,
    "drift": "drift",
    "not_evaluated": "not evaluated",
    "baseline_error": "error",
    "no_baseline": "no baseline",
    "pass_rate": "pass rate below the minimum",
    "history": "history",
    "pass_k": "pass^k",
}


def _lead_word(kind: str, condition: str | None) -> str:
    if kind == "efficiency":
        return (condition or "").replace("_", " ")
    return "failing condition" if kind == UNRECORDED else _LABELS[kind]


def kind_label(failure: FailureRecord) -> str:
    """What a failing condition is called where conditions are counted (the job log): its line's lead words, an
    efficiency failure's by its condition (`cost regression`); a version-1 file's, whose kind is unknown, plainly."""
    return _lead_word(failure.kind, failure.figures.condition)


def line_lead(kind: str, condition: str | None) -> str:
    """What a failing condition's line starts with, before its body (`regression: `); nothing for the pass rate,
    whose line is one sentence, nor for a version-1 file's line, whose kind is unknown."""
    if kind in ("pass_rate", UNRECORDED):
        return ""
    return f"{'error' if kind == 'baseline_error' else _lead_word(kind, condition)}: "


def where(subject: Subject) -> str:
    """`agent/eval set case criterion`, or `agent (all N eval sets) criterion` for a pooled verdict."""
    if subject.scope == "pooled":
        return f"{subject.agent} (all {subject.eval_sets} eval sets) {subject.criterion}"
    case = f" {subject.eval_id}" if subject.scope == "case" else ""
    return f"{subject.agent}/{subject.eval_set_id}{case} {subject.criterion}"


def failure_body(
    failure: Failure, reason_of: Mapping[Subject, str], plain_of: Mapping[Subject, str] | None = None
) -> str:
    """A failing condition's line after its kind's label: where, and a compared verdict's reason after what changed
    for the user in plain words (`plain_of`: gate/plain.py) when it is known; the whole sentence for the pass rate
    and for a missing baseline, whose label leads the line."""
    subject, kind = failure.subject, failure.kind
    if kind in _VERDICT_KINDS and subject is not None:
        plain = (plain_of or {}).get(subject)
        if plain:
            return f"{where(subject)}: {plain}; {reason_of[subject]}"
        return f"{where(subject)} {reason_of[subject]}"
    if kind == "efficiency" and subject is not None:
        return f"{subject.agent}/{subject.eval_set_id} {subject.criterion} {reason_of[subject]}"
    if kind == "drift" and subject is not None:
        return f"{subject.agent} {subject.criterion} {reason_of[subject]}"
    if kind in _CASE_KINDS and subject is not None:
        return f"{subject.agent}/{subject.eval_set_id} {subject.eval_id}: {failure.detail}"
    if kind == "not_evaluated" and subject is not None:
        return f"{subject.agent}/{subject.eval_set_id} {subject.eval_id} {subject.criterion}: {failure.detail}"
    if kind == "baseline_error":
        return f"the baseline could not be loaded, so no regression could be seen: {failure.detail}"
    if kind == "no_baseline":
        return "there was no baseline to compare with"
    if kind == "pass_rate":
        return f"pass rate {failure.rate or 0.0:.1%} is below the minimum {failure.minimum or 0.0:.0%}"
    return f"{failure.detail}"


def failure_line(failure: Failure, body: str) -> str:
    """One failing condition, `kind: body`; the pass rate's is one sentence."""
    return line_lead(failure.kind, failure.condition) + body


def not_gating_text(note: NotGating) -> str:
    """Why a reported regression does not gate: the clause its reason ends with, after `; `."""
    if note.kind == "quarantined":
        return "quarantined: known flaky on the default branch (gate.quarantine), reported, not gating"
    if note.kind == "behind_failing_group":
        return "behind a failing eval-set or pooled verdict"
    if note.kind == "case_alone":
        why = f"gate.fail_on lacks {note.condition}" if note.condition else "not a gating condition"
        return f"significant for this case alone, not gating ({why})"
    return f"reported, not gating (gate.fail_on lacks {note.condition})"


def accepted_by(override: Override) -> str:
    """`accepted by @login for commit abc: reason`, or the label, with who added it and when once that is known."""
    if override.kind == "comment":
        return f"accepted by @{override.by} for commit {short_sha(override.sha)}: {override.reason}"
    who = f" (added by @{override.by} at {override.at})" if override.by and override.at else ""
    return f"accepted by the '{override.label}' label{who}"


def headline(decision: Decision, failures: list[str]) -> str:
    """The gate's one-line reason: what failed it (and what accepted that), or what it found nothing wrong in."""
    if failures:
        summary = f"{len(failures)} failing condition(s); first: {failures[0]}"
        return f"{accepted_by(decision.override)} despite {summary}" if decision.override else summary
    if not decision.has_baseline:
        reason = "no baseline yet: every case is new; the gate's conditions hold"
    else:
        seen = decision.looked_at
        scope = f"{seen.eval_sets_compared} eval-set comparison(s)" + (
            f" and {seen.pooled} pooled over eval sets" if seen.pooled else ""
        )
        if seen.drift_tests:
            scope += f" and {seen.drift_tests} drift test(s) over {seen.merges} merge(s)"
        reason = f"no failing condition ({', '.join(decision.fail_on) or 'none'}) in {scope}"
        if seen.regressions_not_gating:
            reason += f"; {seen.regressions_not_gating} regression(s) reported but not gating"
    if decision.unconfirmed:
        settled = settle_text(decision.settle) if decision.settle else None
        # warn mode: the check passes, but the reason never reads as a clean pass
        return f"{decision.unconfirmed} drop(s) unconfirmed, not gating (gate.unconfirmed: warn): {settled}; {reason}"
    return reason
