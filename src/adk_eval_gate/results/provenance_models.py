"""What scored a run besides the code: the judge model of each LLM-judged criterion (configured, and the versions
the API said served it), the agent's served model versions, and the versions of the libraries that score. A
`provenance` block of the results file (`ResultsFile.provenance`); a baseline keeps it, the history a short form.

Here, apart from `results_format.py`, so the builders (`results/provenance.py`) and the comparison
(`baseline/provenance_changes.py`) share one definition; `results_format.py` imports it into the results file.
"""

from __future__ import annotations

from typing import Final

from pydantic import BaseModel, Field

from adk_eval_gate.core.numbers import STORED_FILE, Count

UNKNOWN: Final = "unknown"  # the API or the target returned no version


class _Model(BaseModel):
    model_config = STORED_FILE


class JudgeProvenance(_Model):
    """One LLM-judged criterion's judge."""

    model: str = Field(description="The judge model the criterion's options name (judge_model_options.judge_model).")
    served: dict[str, Count] = Field(
        default_factory=dict,
        description="Per model version the API returned (GenerateContentResponse.model_version), the answers it "
        "gave; empty when no answer carried one (cached answers count: they were served so).",
    )


class AgentProvenance(_Model):
    """One agent's model, as its events report it."""

    target: str = Field(description="The target kind: adk, http, command, replay, agents-cli.")
    label: str | None = Field(
        default=None,
        description="Set when the versions are not a model served now: `offline` (the expected turns played) or "
        "`replay` (versions as recorded when the actuals were made).",
    )
    served: dict[str, Count] = Field(
        default_factory=dict,
        description="Per served model version (ADK's LlmResponse.model_version on each event; `unknown` when an "
        "event with usage carried none), the model calls that reported it.",
    )


class ScorerVersions(_Model):
    """The versions of what turns invocations into scores; null: not installed."""

    adk_eval_gate: str
    adk_semantics: str = Field(description="The google-adk release whose scoring rules the scorers follow.")
    google_adk: str | None = None
    agents_cli: str | None = Field(default=None, description="google-agents-cli, which scores agents-cli metrics.")
    rouge_score: str | None = Field(default=None, description="rouge-score, behind response_match_score.")


class Rescored(_Model):
    """Set on a baseline whose stored invocations were scored again with the pull request's judges and scorers, so
    that the comparison is like for like: what scored it then."""

    judges: dict[str, JudgeProvenance] = Field(default_factory=dict)
    scorers: ScorerVersions


class RunProvenance(_Model):
    judges: dict[str, JudgeProvenance] = Field(
        default_factory=dict, description="Per LLM-judged criterion name, its judge."
    )
    agents: dict[str, AgentProvenance] = Field(default_factory=dict, description="Per agent, its served model.")
    scorers: ScorerVersions
    rescored: Rescored | None = Field(
        default=None, description="On a baseline re-scored for a comparison: the judges and scorers that did it."
    )
