"""What changed between the baseline and the pull request besides the code: a criterion's judge (the model its
options name, or the versions the API said answered), an agent's served model version, a scoring library's
version. Said first in the comment and the console (`report/provenance_line.py`).

Which changes make scores not comparable, and what the gate does then (docs/provenance.md):
* a judge change makes its criterion's scores not comparable; a change of the scoring rules (`adk_semantics`)
  every criterion's, of rouge-score `response_match_score`'s, of google-agents-cli its eval sets' metrics';
* when the baseline kept its invocations, `run/rescore_baseline.py` scored them again with today's judges and
  scorers (the baseline's `provenance.rescored`), and the comparison is like for like;
* otherwise `like_for_like` marks those criteria in the baseline so their rows are `not_comparable` (never a drop
  passed or flagged across judges), which fails the gate where `gate.fail_on` holds `not_comparable`, and the line
  says what to do;
* an agent's served model version, google-adk's and our own version are named, never a reason not to compare: a
  new model behind the agent's name is a change of the agent, gated like one; the scoring rules follow
  `adk_semantics`, which a change of either leaves as it was.

Pure functions over the two results files; they build new values and edit neither.
"""

from __future__ import annotations

from typing import Final, Literal

from pydantic import BaseModel, ConfigDict, Field

from adk_eval_gate.results.provenance_models import UNKNOWN, JudgeProvenance, RunProvenance, ScorerVersions
from adk_eval_gate.results.results_format import CriterionConfig, EvalSetResult, ResultsFile

# A baseline criterion's hash marked so: `case_rows` reads the row as not comparable, its note naming the change.
SCORER_CHANGED: Final = "scorer-changed:"
ALL_CRITERIA: Final = "*"
BASELINE_UPDATE: Final = (
    "run `adk-eval-gate baseline update` on the default branch (or merge a change there) so the baseline is "
    "scored by the same judge and scorers; a baseline store that keeps invocations (`baseline.store: artifact`, or "
    "`--baseline` with a full results file) is re-scored instead"
)

ChangeKind = Literal["judge", "served_model", "scorer"]
Handling = Literal["compared", "rescored", "not_comparable"]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ProvenanceChange(_Model):
    kind: ChangeKind
    subject: str = Field(description="The criterion (judge), the agent (served model) or the library (scorer).")
    baseline: str
    current: str


class ChangedBesidesCode(_Model):
    """What changed besides the code, and what the comparison did about it."""

    changes: list[ProvenanceChange]
    handling: Handling = Field(
        description="compared: nothing changed that scores (named only); rescored: the baseline's stored "
        "invocations were scored again with today's judges and scorers; not_comparable: they were not stored, so "
        "the criteria listed were not compared."
    )
    criteria: list[str] = Field(default_factory=list, description="The criteria whose scores the changes affect.")
    fix: str | None = None


def versions(served: dict[str, int]) -> str:
    known = sorted(v for v in served if v != UNKNOWN)
    return ", ".join(known) if known else UNKNOWN


def _served_changed(before: dict[str, int], after: dict[str, int]) -> bool:
    """Both sides named versions, and not the same ones (an unknown side cannot tell a change)."""
    a, b = set(before) - {UNKNOWN}, set(after) - {UNKNOWN}
    return bool(a) and bool(b) and a != b


def _judge_change(name: str, before: JudgeProvenance, after: JudgeProvenance) -> ProvenanceChange | None:
    if before.model != after.model:
        return ProvenanceChange(kind="judge", subject=name, baseline=before.model, current=after.model)
    if _served_changed(before.served, after.served):
        was, now = versions(before.served), versions(after.served)
        return ProvenanceChange(kind="judge", subject=name, baseline=was, current=now)
    return None


def _scorer_changes(before: ScorerVersions, after: ScorerVersions) -> list[ProvenanceChange]:
    out = []
    for field, new in after.model_dump().items():
        old = getattr(before, field)
        if old != new:
            subject = field.replace("_", "-")
            out.append(ProvenanceChange(kind="scorer", subject=subject, baseline=old or "none", current=new or "none"))
    return out


def _changes(base: RunProvenance, current: RunProvenance) -> list[ProvenanceChange]:
    found = [
        change
        for name in sorted(set(base.judges) & set(current.judges))
        if (change := _judge_change(name, base.judges[name], current.judges[name])) is not None
    ]
    for agent in sorted(set(base.agents) & set(current.agents)):
        before, after = base.agents[agent], current.agents[agent]
        if _served_changed(before.served, after.served):
            was, now = versions(before.served), versions(after.served)
            found.append(ProvenanceChange(kind="served_model", subject=agent, baseline=was, current=now))
    return found + _scorer_changes(base.scorers, current.scorers)


def affected(
    judges: dict[str, JudgeProvenance], scorers: ScorerVersions, current: RunProvenance, results: ResultsFile
) -> dict[str, str]:
    """Criterion name (or ALL_CRITERIA) → what changed in how it is scored, from a baseline's judges and scorers to
    the current run's: the criteria whose scores the two cannot compare."""
    out: dict[str, str] = {}
    for name in sorted(set(judges) & set(current.judges)):
        change = _judge_change(name, judges[name], current.judges[name])
        if change is not None:
            out[name] = f"judge {change.baseline} → {change.current}"
    now = current.scorers
    if scorers.adk_semantics != now.adk_semantics:
        out[ALL_CRITERIA] = f"scoring rules {scorers.adk_semantics} → {now.adk_semantics}"
    if scorers.rouge_score != now.rouge_score:
        out.setdefault("response_match_score", f"rouge-score {scorers.rouge_score} → {now.rouge_score}")
    if scorers.agents_cli != now.agents_cli:
        for eval_set in results.eval_sets:
            if eval_set.shape == "agents_cli":
                for name in eval_set.criteria:
                    out.setdefault(name, f"google-agents-cli {scorers.agents_cli} → {now.agents_cli}")
    return out


def scoring_changed(baseline: ResultsFile, current: ResultsFile) -> dict[str, str]:
    """What the baseline, as it was scored (re-scored or not), cannot be compared on with the current run."""
    base, now = baseline.provenance, current.provenance
    if base is None or now is None:  # a file from before provenance was recorded: nothing can be told
        return {}
    scored = base.rescored or base
    return affected(scored.judges, scored.scorers, now, current)


def provenance_changes(baseline: ResultsFile, current: ResultsFile) -> ChangedBesidesCode | None:
    """What changed besides the code, or None when nothing did (or either side predates provenance)."""
    base, now = baseline.provenance, current.provenance
    if base is None or now is None:
        return None
    changes = _changes(base, now)
    if not changes:
        return None
    left = scoring_changed(baseline, current)
    if left:
        return ChangedBesidesCode(
            changes=changes, handling="not_comparable", criteria=sorted(left), fix=BASELINE_UPDATE
        )
    if base.rescored is not None:
        criteria = sorted(affected(base.judges, base.scorers, now, current))
        return ChangedBesidesCode(changes=changes, handling="rescored", criteria=criteria)
    return ChangedBesidesCode(changes=changes, handling="compared")


def _marked(eval_set: EvalSetResult, left: dict[str, str]) -> EvalSetResult:
    criteria: dict[str, CriterionConfig] = {}
    for name, config in eval_set.criteria.items():
        why = left.get(name) or left.get(ALL_CRITERIA)
        criteria[name] = config.model_copy(update={"hash": SCORER_CHANGED + why}) if why else config
    return eval_set.model_copy(update={"criteria": criteria})


def marked(results: ResultsFile, left: dict[str, str]) -> ResultsFile:
    """`results` (a new file) with the criteria of `left` (from `affected`) marked as scored otherwise."""
    if not left:
        return results
    return results.model_copy(update={"eval_sets": [_marked(s, left) for s in results.eval_sets]})


def like_for_like(baseline: ResultsFile, current: ResultsFile) -> ResultsFile:
    """The baseline with every criterion the current run scores differently marked not comparable (a new file):
    its rows say so rather than pass or flag a change of judge as the agent's."""
    return marked(baseline, scoring_changed(baseline, current))
