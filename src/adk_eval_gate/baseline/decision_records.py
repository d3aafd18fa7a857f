"""The gate's decision as the comparison file stores it: each failing condition and each note on a regression that
does not gate, as data (`kind`, `subject`, `figures`) with its sentence (`text`) beside it. Whoever reads the file
(publish, view, the job log, JUnit, `goldens --regressed`) reads the data; the sentence is for people, never parsed.

Here, below the gate, because the comparison file's models are here (baseline/comparison_format.py);
gate/outcome.py builds its decision from the same `Subject`, so the subject the gate judged is the one the file names.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from adk_eval_gate.core.numbers import STORED_FILE, Count

Scope = Literal["case", "eval_set", "pooled", "drift", "efficiency"]

FailureKind = Literal[
    "regression",
    "case_regression",
    "unconfirmed",
    "inconclusive",
    "not_comparable",
    "efficiency",
    "below_threshold",
    "baseline_error",
    "error",
    "not_run",
    "not_evaluated",
    "no_baseline",
    "pass_rate",
    "history",
    "drift",
    "pass_k",
]
# A failure line of a file written before failures were data (schema_version 1): only its sentence is known.
UNRECORDED: Literal["unrecorded"] = "unrecorded"

NotGatingKind = Literal["lacks_condition", "quarantined", "behind_failing_group", "case_alone"]


class _Record(BaseModel):
    # frozen: a subject is a key (the gate's sets and the report's lookups), and no reader edits a decision
    model_config = ConfigDict(**STORED_FILE, frozen=True)


class Subject(_Record):
    """What a note is about: one compared verdict (a case, an eval set, a pooled, drift or efficiency row) or, for
    a status condition, one case of the results (`criterion` then names the criterion not evaluated, if any)."""

    scope: Scope
    agent: str
    criterion: str | None = Field(default=None, description="The criterion, or an efficiency row's metric.")
    eval_set_id: str | None = None
    eval_id: str | None = None
    eval_sets: Count | None = Field(default=None, description="A pooled verdict: over how many eval sets.")


class Figures(_Record):
    """The numbers and words a condition carries beyond its subject; null where the kind has none."""

    detail: str | None = Field(
        default=None, description="A status condition's cause: the case's, criterion's, baseline's or history's error."
    )
    condition: str | None = Field(
        default=None, description="The gate.fail_on condition: an efficiency failure's, or the one a note lacks."
    )
    rate: float | None = Field(default=None, description="pass_rate: the run's pass rate.")
    minimum: float | None = Field(default=None, description="pass_rate: gate.min_pass_rate.")


class FailureRecord(_Record):
    """One condition that failed the gate."""

    kind: FailureKind | Literal["unrecorded"] = Field(
        description="What failed; 'unrecorded' only in a file of schema_version 1, which kept the sentence alone."
    )
    subject: Subject | None = None
    figures: Figures = Figures()
    text: str = Field(description="The condition as people read it: `kind: where reason`.")


class NoteRecord(_Record):
    """Why a regression is reported but does not fail the gate."""

    kind: NotGatingKind
    subject: Subject
    figures: Figures = Figures()
    text: str = Field(description="The clause the regression's reason ends with.")
