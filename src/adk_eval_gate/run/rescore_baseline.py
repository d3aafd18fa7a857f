"""A baseline scored again with today's judges and scorers, when one of them changed since it was made and it kept
the agent's invocations (an `artifact` store's results, or `--baseline` with a full results file; the `file` and
`branch` stores slim them away): the comparison is then like for like, and the baseline says so
(`provenance.rescored`). Re-judging stored invocations costs judge calls, never an agent run.

The invocations are replayed through the run's own pipeline (`targets/replay.py`, one file per agent), so they are
scored exactly as the pull request's were, within the run's spending limit. Only the criteria whose scoring
changed, and whose options are the same on both sides, take the new scores; everything else of the baseline stays
as it was stored. Nothing is edited: the result is a new baseline."""

from __future__ import annotations

import dataclasses
import sys
import tempfile
from pathlib import Path

from adk_eval_gate.baseline.provenance_changes import ALL_CRITERIA, scoring_changed
from adk_eval_gate.baseline.stores import LoadOutcome
from adk_eval_gate.config.target_settings import ReplayTargetSettings
from adk_eval_gate.core.errors import InputError
from adk_eval_gate.results.build import write_results
from adk_eval_gate.results.provenance_models import Rescored
from adk_eval_gate.results.results_format import CaseResult, EvalSetResult, ResultsFile
from adk_eval_gate.run.plan import AgentRunPlan, Plan


def keeps_invocations(baseline: ResultsFile) -> bool:
    """Every run that did not error kept its invocations (a slimmed baseline kept none)."""
    runs = [run for s in baseline.eval_sets for c in s.cases for run in c.runs if run.error is None]
    return bool(runs) and all(run.actual_invocations is not None for run in runs)


def _agent_file(baseline: ResultsFile, agent: str, folder: Path) -> Path:
    path = folder / f"{agent}.json"
    own = baseline.model_copy(update={"eval_sets": [s for s in baseline.eval_sets if s.agent == agent]})
    write_results(own, path)
    return path


def _replay_plan(plan: Plan, baseline: ResultsFile, folder: Path) -> Plan:
    """The run's plan with each agent's target replaced by the baseline's recorded runs, as many as it holds."""
    agents = []
    for agent in plan.agents:
        held = [len(c.runs) for s in baseline.eval_sets if s.agent == agent.name for c in s.cases]
        path = _agent_file(baseline, agent.name, folder)
        target = ReplayTargetSettings(kind="replay", actuals=[str(path)])
        settings = agent.agent.settings.model_copy(update={"target": target, "num_runs": max(held, default=1)})
        replayed = dataclasses.replace(agent.agent, settings=settings, actuals_paths=(path,))
        agents.append(AgentRunPlan(replayed, agent.eval_sets))
    return Plan(plan.workflow, tuple(agents))


def _case(stored: CaseResult, again: CaseResult | None, names: set[str]) -> CaseResult:
    if again is None:
        return stored
    metrics = {
        name: again.metrics[name] if name in names and name in again.metrics else m
        for name, m in stored.metrics.items()
    }
    return stored.model_copy(update={"metrics": metrics})


def _eval_set(stored: EvalSetResult, again: EvalSetResult | None, changed: set[str]) -> EvalSetResult:
    if again is None:
        return stored
    # the same options on both sides: otherwise the row is not comparable for that reason, re-scored or not
    names = {
        name
        for name, config in stored.criteria.items()
        if (name in changed or ALL_CRITERIA in changed)
        and config.hash == getattr(again.criteria.get(name), "hash", None)
    }
    cases = {c.eval_id: c for c in again.cases}
    return stored.model_copy(update={"cases": [_case(c, cases.get(c.eval_id), names) for c in stored.cases]})


def rescored(plan: Plan, baseline: ResultsFile, current: ResultsFile) -> ResultsFile | None:
    """The baseline scored again by today's judges and scorers, or None when nothing that scores changed, the
    baseline kept no invocations, or it was re-scored already."""
    from adk_eval_gate.run.pipeline import run_plan  # the pipeline is this layer's heaviest import: only when needed

    changed = scoring_changed(baseline, current)
    if not changed or baseline.provenance is None or not keeps_invocations(baseline):
        return None
    with tempfile.TemporaryDirectory(prefix="adk-eval-gate-rescore-") as folder:
        again = run_plan(_replay_plan(plan, baseline, Path(folder)), quiet=True)
    if again.provenance is None:  # the pipeline always records it; without it nothing says what re-scored it
        return None
    by_set = {(s.agent, s.eval_set_id): s for s in again.eval_sets}
    eval_sets = [_eval_set(s, by_set.get((s.agent, s.eval_set_id)), set(changed)) for s in baseline.eval_sets]
    how = Rescored(judges=again.provenance.judges, scorers=again.provenance.scorers)
    provenance = baseline.provenance.model_copy(update={"rescored": how})
    return baseline.model_copy(update={"eval_sets": eval_sets, "provenance": provenance})


def rescore_outcome(plan: Plan, outcome: LoadOutcome, current: ResultsFile) -> LoadOutcome:
    """The loaded baseline re-scored where a judge or scorer changed and its invocations were kept (a new
    outcome); as it was otherwise, the comparison then marking those criteria not comparable."""
    loaded = outcome.baseline
    if loaded is None:
        return outcome
    try:
        again = rescored(plan, loaded.results, current)
    except InputError as exc:  # the stored invocations could not be read back: said, and compared as not comparable
        warning = f"the baseline's stored invocations could not be re-scored: {exc}"
        return dataclasses.replace(outcome, warnings=[*outcome.warnings, warning])
    if again is None:
        return outcome
    print("Re-scored the baseline's stored invocations with today's judges and scorers.", file=sys.stderr)
    return dataclasses.replace(outcome, baseline=dataclasses.replace(loaded, results=again))
