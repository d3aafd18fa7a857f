"""A run's provenance (`results/provenance_models.py`) built from what the run already holds: the judge models its
criteria name and the versions the judges' answers carried, the served model versions its agents' events
reported (`agent_usage.by_model`), and the installed versions of the scoring libraries. Every function returns
new values; nothing here edits a results file."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from importlib import metadata

from adk_eval_gate.core.version import __version__
from adk_eval_gate.results.provenance_models import (
    AgentProvenance,
    JudgeProvenance,
    RunProvenance,
    ScorerVersions,
)
from adk_eval_gate.results.results_format import ResultsFile

# The distributions whose versions say what scored (besides ours): google-adk runs the agent and defines the
# scoring rules, google-agents-cli scores agents-cli metrics, rouge-score scores response_match_score.
_DISTRIBUTIONS = {"google_adk": "google-adk", "agents_cli": "google-agents-cli", "rouge_score": "rouge-score"}


def installed(distribution: str) -> str | None:
    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return None


def scorer_versions(adk_semantics: str) -> ScorerVersions:
    found = {field: installed(name) for field, name in _DISTRIBUTIONS.items()}
    return ScorerVersions(adk_eval_gate=__version__, adk_semantics=adk_semantics, **found)


def judge_model_of(options: Mapping[str, object]) -> str | None:
    """The judge a criterion's options name, or None for a criterion no LLM judges."""
    judge = options.get("judge_model_options")
    if isinstance(judge, Mapping) and isinstance(judge.get("judge_model"), str):
        return str(judge["judge_model"])
    return None


def judges_of(results: ResultsFile, served: Mapping[str, Mapping[str, int]]) -> dict[str, JudgeProvenance]:
    """Per judged criterion, the judge its options name (several, comma-joined, when eval sets differ) and the
    versions that answered; `served` is keyed by criterion name, as the model client counts per purpose."""
    models: dict[str, set[str]] = {}
    for eval_set in results.eval_sets:
        for name, config in eval_set.criteria.items():
            model = judge_model_of(config.options)
            if model is not None:
                models.setdefault(name, set()).add(model)
    return {
        name: JudgeProvenance(model=", ".join(sorted(names)), served=dict(sorted(served.get(name, {}).items())))
        for name, names in sorted(models.items())
    }


def _label(target: str, offline: bool) -> str | None:
    if offline:
        return "offline"  # the expected turns were played: no model served anything
    if target in ("replay", "agents-cli"):
        return "replay"  # the versions, if any, are those recorded when the actuals were made
    return None


def agents_of(results: ResultsFile) -> dict[str, AgentProvenance]:
    targets: dict[str, str] = {}
    for eval_set in results.eval_sets:
        targets.setdefault(eval_set.agent, eval_set.target)
    out = {}
    for agent, target in sorted(targets.items()):
        usage = results.agent_usage.get(agent)
        served = {model: tally.calls for model, tally in sorted(usage.by_model.items())} if usage else {}
        out[agent] = AgentProvenance(target=target, label=_label(target, results.offline is not None), served=served)
    return out


def provenance_of(results: ResultsFile, judge_served: Mapping[str, Mapping[str, int]]) -> RunProvenance:
    return RunProvenance(
        judges=judges_of(results, judge_served),
        agents=agents_of(results),
        scorers=scorer_versions(results.tool.adk_semantics),
    )


def with_provenance(results: ResultsFile, judge_served: Mapping[str, Mapping[str, int]]) -> ResultsFile:
    """The results with their provenance block: a new file, the given one untouched."""
    return results.model_copy(update={"provenance": provenance_of(results, judge_served)})


def _summed(counts: Iterable[Mapping[str, int]]) -> dict[str, int]:
    out: dict[str, int] = {}
    for one in counts:
        for key, value in one.items():
            out[key] = out.get(key, 0) + value
    return dict(sorted(out.items()))


def merged_provenance(a: RunProvenance | None, b: RunProvenance | None) -> RunProvenance | None:
    """Two shards' provenance as one run's: served versions summed; a shard without one (an earlier version's)
    leaves the other's."""
    if a is None or b is None:
        return a or b
    judges = {
        name: JudgeProvenance(
            model=", ".join(
                sorted({m for j in (a.judges.get(name), b.judges.get(name)) if j for m in j.model.split(", ")})
            ),
            served=_summed(j.served for j in (a.judges.get(name), b.judges.get(name)) if j),
        )
        for name in sorted({*a.judges, *b.judges})
    }
    agents = {}
    for name in sorted({*a.agents, *b.agents}):
        sides = [p for p in (a.agents.get(name), b.agents.get(name)) if p is not None]
        agents[name] = sides[0].model_copy(update={"served": _summed(p.served for p in sides)})
    return RunProvenance(judges=judges, agents=agents, scorers=a.scorers)
