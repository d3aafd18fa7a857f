"""Every compared row's note as the `reason` people read: the verdict rule's part (and the values it compared when
there was no test), what the evidence of an inconclusive row counts in, what a pooled verdict pooled, why a drop is
unconfirmed, what a drift verdict was compared with, why a case or an eval set was not compared, and an efficiency
row's change. `gate/comparison_file.py` writes these into the comparison file; nothing below gate/ makes it.
"""

from __future__ import annotations

from adk_eval_gate.baseline.comparison_format import DriftRow, EfficiencyRow, PooledSummary, Row, Summary
from adk_eval_gate.baseline.drift_start import DriftStart
from adk_eval_gate.baseline.efficiency_compare import UNITS
from adk_eval_gate.baseline.power_report import runs_setting
from adk_eval_gate.baseline.row_notes import EfficiencyNote, Settle, StatusNote, Unconfirmed, VerdictNote
from adk_eval_gate.core.clip import clip, short_sha

_COUNTED_IN = {
    "eval_set_and_pooled": "; counted in the eval-set and pooled verdicts",
    "eval_set": "; counted in the eval-set verdict",
    "pooled": "; counted in the pooled verdict",
}
_STATUS = {
    "case_new": "not in the baseline",
    "case_removed": "no longer evaluated",
    "case_edited": "the eval case was edited since the baseline",
    "set_new": "no baseline for this eval set and criterion yet",
    "criterion_removed": "the criterion is no longer configured",
    "none_compared": "no case could be compared with the baseline",
    "set_removed": "the eval set is no longer run",
}


def reason(row: Row | Summary | PooledSummary | DriftRow | EfficiencyRow) -> str:
    """The row's reason: made from its note, or as it was read (a comparison file's rows carry no note)."""
    note = row.note
    if isinstance(note, VerdictNote):
        if isinstance(row, DriftRow) and row.began is not None and row.verdict == "regressed":
            return f"{verdict_reason(note)}; {slide_text(row.began)}"
        return verdict_reason(note)
    if isinstance(note, StatusNote):
        return status_reason(note)
    if isinstance(note, EfficiencyNote):
        assert isinstance(row, EfficiencyRow)  # only an efficiency row carries one
        return efficiency_reason(row, note)
    return row.reason


def slide_text(start: DriftStart) -> str:
    """Where a drift began: the merge, its commit, the means either side and how sure the change-point is."""
    how = "" if start.significant else ", not significant: the records alone do not single it out"
    return (
        f"the slide began at merge {short_sha(start.sha)} ({clip(start.date, 10, marker='')}, {start.merges} after "
        f"the reference; mean {start.before:.3f} → {start.after:.3f}, change-point p = {start.p_value:.2g}{how})"
    )


def _fmt(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3f}"


def _rule(note: VerdictNote, unconfirmed: bool) -> str:
    """The verdict rule's part: what changed, against which tolerance, and how significantly."""
    delta, tolerance, p, alpha = note.delta, note.tolerance, note.p or 0.0, note.alpha or 0.0
    if note.kind == "one_sample_within":
        return f"one sample a side, changed {delta:+.3f}, within tolerance {tolerance:g}"
    if note.kind == "one_sample_beyond":
        return f"one sample a side, changed {delta:+.3f}: not enough evidence alone"
    if note.kind == "dropped":
        return f"dropped {-delta:.3f} (≥ tolerance {tolerance:g}), p = {p:.2g} < {alpha:g} ({note.method})"
    if note.kind == "rose":
        return f"rose {delta:.3f} (≥ tolerance {tolerance:g}), p = {p:.2g} < {alpha:g} ({note.method})"
    if note.kind == "within":
        return f"changed {delta:+.3f}, within tolerance {tolerance:g}"
    if note.kind == "within_judge_noise":
        return (
            f"dropped {-delta:.3f}, but the judge disagrees with itself on this case {note.judge_flip or 0.0:.0%} of "
            f"the time: on judge-averaged scores it changed {note.judge_delta or 0.0:+.3f}, p = {p:.2g} "
            f"(tolerance {tolerance:g}, level {alpha:g}): within judge noise, not an agent regression"
        )
    if note.kind == "beyond":
        return (
            f"changed {delta:+.3f}, beyond tolerance {tolerance:g} but p = {p:.2g} ≥ {alpha:g}: "
            "could be noise; more num_runs would settle it"
        )
    # cannot_reach: an unconfirmed drop's consequence is gate.unconfirmed's, said after it, not "does not gate"
    does_not_gate = "" if unconfirmed else ", so it does not gate"
    return (
        f"changed {delta:+.3f}, beyond tolerance {tolerance:g}, but these samples cannot "
        f"reach p < {alpha:g} (at best p = {note.smallest or 0.0:.2g}): not enough evidence alone{does_not_gate}"
    )


def _unconfirmed(marked: Unconfirmed) -> str:
    runs = (
        f"{{{marked.first_runs}–{marked.max_runs}}}" if marked.max_runs > marked.first_runs else str(marked.first_runs)
    )
    baseline = "" if marked.baseline_runs == marked.max_runs else f", baseline {marked.baseline_runs}"
    weighed = f"{marked.cases} case(s) × {runs} run{'' if runs == '1' else 's'}{baseline}" + (
        f", pooled with the agent's other eval sets ({marked.pooled_cases} cases)," if marked.pooled_cases else ""
    )
    could = (
        f"confirms nothing at alpha {marked.alpha:g}"
        if marked.significant is None
        else f"confirms only a clean break of {marked.significant} or more cases"
    )
    touched = marked.touched
    held = "the samples in hand, " if marked.in_hand else ""
    return (
        f"; unconfirmed: the drop touches at least {touched} case{'s' if touched != 1 else ''} and "
        f"{held}{weighed} {could}, so the gate cannot know; {settle_text(marked.settle)}"
    )


def _in_hand_text(settle: Settle) -> str:
    """The runs the configured range gives but the samples in hand lack, as the command lines that add them."""
    first, most = settle.runs or (0, 0)
    baseline = settle.baseline or "BASELINE.json"
    parts = []
    if settle.baseline_runs is not None:
        parts.append(
            f"the baseline holds {settle.baseline_runs} run(s) a case, not num_runs' max {most}: make it at the max "
            f"on the baseline's commit with `adk-eval-gate run --all-runs --output {baseline}`"
        )
    if settle.extra:
        parts.append(
            f"the cases that look worse ran {first} times, not up to {most} (nothing to compare with when they ran): "
            f"`adk-eval-gate run --baseline {baseline}` adds up to {most - first} runs to each"
        )
    return (
        "these samples cannot confirm it, though num_runs "
        + f"{{min: {first}, max: {most}}} could: "
        + ("; then ".join(parts) or f"`adk-eval-gate run --baseline {baseline}` would settle it")
    )


def settle_text(settle: Settle) -> str:
    """What would settle an unconfirmed drop: the runs the samples in hand lack, the num_runs that would, or that
    only more cases can."""
    if settle.kind == "in_hand":
        return _in_hand_text(settle)
    if settle.kind == "more_runs" and settle.runs is not None:
        first, most = settle.runs
        return (
            f"{runs_setting(settle.runs)} would settle it: every case runs {first} times, a case that looks "
            f"worse up to {most} (the default branch's push runs {most})"
        )
    return f"only more cases can settle it: no num_runs up to max 20 confirms so small a drop on {settle.cases} cases"


def verdict_reason(note: VerdictNote) -> str:
    """A compared verdict's reason, in the order its parts were decided."""
    text = _rule(note, note.unconfirmed is not None)
    if note.values is not None:
        text = f"{_fmt(note.values[0])} → {_fmt(note.values[1])}; {text}"
    if note.counted_in is not None:
        text += _COUNTED_IN[note.counted_in]
    if note.pooled_over is not None:
        text += f"; {note.pooled_over[0]} cases in {note.pooled_over[1]} eval sets"
    if note.unconfirmed is not None:
        text += _unconfirmed(note.unconfirmed)
    if note.means is not None:
        reference, current, cases = note.means
        text = f"since {note.since}: {text}; mean score {reference:.3f} → {current:.3f} over {cases} cases"
    return text


def status_reason(note: StatusNote) -> str:
    """Why a case or an eval set × criterion was not compared."""
    if note.kind == "threshold_changed" and note.thresholds is not None:
        base, current = note.thresholds
        return f"the {note.criterion} configuration changed since the baseline (threshold {base:g} → {current:g})"
    if note.kind == "scorer_changed":
        return f"{note.criterion} is scored otherwise than the baseline was ({note.detail}): not comparable"
    if note.kind == "options_changed":
        return f"the {note.criterion} options changed since the baseline"
    if note.kind == "not_run":
        return note.detail or "not run"
    if note.kind == "errored":
        return f"the {note.side} errored: {note.detail}"
    if note.kind == "no_score":
        return f"the {note.side} has no score: {note.detail or 'no score'}"
    return _STATUS[note.kind]


def efficiency_reason(row: EfficiencyRow, note: EfficiencyNote) -> str:
    """An efficiency row's change per run, against its tolerance."""
    values = f"{row.baseline:.4g} → {row.current:.4g} {UNITS[row.metric]}"
    size = f"{row.change:+.0%} per run ({values}, {row.cases_compared} cases)"
    if note.kind == "regressed":
        return f"{size}: ≥ tolerance +{row.tolerance:.0%}, p = {note.p:.2g} < {note.alpha:g}"
    if note.kind == "improved":
        return f"{size}: beyond tolerance, p = {note.p:.2g} < {note.alpha:g}"
    if note.kind == "within":
        return f"{size}: within tolerance ±{row.tolerance:.0%}"
    if note.unconfirmed:
        return (
            f"{size}: beyond tolerance, but these samples cannot reach p < {note.alpha:g} (at best p = "
            f"{note.smallest or 1.0:.2g}); unconfirmed: the gate cannot know; more runs a case on both sides "
            "(num_runs, and a baseline made at its max) would settle it"
        )
    return f"{size}: beyond tolerance but p = {note.p:.2g} ≥ {note.alpha:g}: could be noise"
