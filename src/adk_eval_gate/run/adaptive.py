"""Which cases of an adaptive agent get extra runs after the first round.

A case is *undecided* while some criterion's first-round mean is below the baseline's selection half (its first
half of runs) by enough to be a drop — its own exact one-sided p-value at most `stages.UNDECIDED_P` (0.5): it may
have regressed, and only more samples can tell. Cases that look no worse (or worse by ordinary noise), new cases
and cases that cannot be compared are decided: their extra runs would add cost and little evidence.
The decision reads only the first round and the selection half, never the baseline's test half, which is what
keeps the extra round's test exact (`baseline/stages.py`, `baseline/stats.combine_stages`).
"""

from __future__ import annotations

import statistics
import sys
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from adk_eval_gate.baseline.stages import baseline_halves, current_rounds, undecided
from adk_eval_gate.baseline.stats import permutation_test
from adk_eval_gate.config.workflow_settings import AdaptiveRuns
from adk_eval_gate.core.errors import InputError
from adk_eval_gate.results.build import read_results
from adk_eval_gate.results.results_format import (
    CaseResult,
    CriterionConfig,
    CriterionLook,
    EvalSetResult,
    ExtraRuns,
    ResultsFile,
    Sampling,
)
from adk_eval_gate.run.plan import Plan

if TYPE_CHECKING:
    from adk_eval_gate.github.context import ActionsContext


__all__ = ["Decider", "decider_for", "has_adaptive_runs", "undecided", "with_more_runs"]


def has_adaptive_runs(plan: Plan) -> bool:
    return any(isinstance(agent.num_runs, AdaptiveRuns) for agent in plan.agents)


def with_more_runs(plan: Plan, most: int) -> Plan:
    """`/eval runs=N`: cases still undecided against the baseline get up to `most` runs (every agent becomes
    adaptive, its first round what the config says); an agent that already runs as many keeps its own."""
    agents = []
    for agent in plan.agents:
        runs = agent.num_runs
        first = runs.min if isinstance(runs, AdaptiveRuns) else runs
        if most > first and not (isinstance(runs, AdaptiveRuns) and runs.max >= most):
            settings = agent.agent.settings.model_copy(update={"num_runs": AdaptiveRuns(min=first, max=most)})
            agent = replace(agent, agent=replace(agent.agent, settings=settings))
        agents.append(agent)
    return replace(plan, agents=tuple(agents))


@dataclass(frozen=True)
class Decider:
    """Built from the baseline the pull request will be compared with; None when there is none yet."""

    baseline: ResultsFile | None

    def _base_set(self, agent: str, eval_set_id: str) -> EvalSetResult | None:
        if self.baseline is None:
            return None
        return next((s for s in self.baseline.eval_sets if (s.agent, s.eval_set_id) == (agent, eval_set_id)), None)

    def decide(
        self,
        agent: str,
        eval_set_id: str,
        criteria: dict[str, CriterionConfig],
        first: CaseResult,
        first_round_runs: int,
        max_runs: int,
    ) -> Sampling:
        base_set = self._base_set(agent, eval_set_id)
        base = next((c for c in base_set.cases if c.eval_id == first.eval_id), None) if base_set else None
        if base_set is None or base is None:
            return Sampling(first_round_runs=first_round_runs, decided="not in the baseline: nothing to compare with")
        if base.case_hash and first.case_hash and base.case_hash != first.case_hash:
            return Sampling(first_round_runs=first_round_runs, decided="edited since the baseline: not comparable")
        if base.status in ("error", "not_run"):
            why = "errored" if base.status == "error" else "did not run it"
            return Sampling(first_round_runs=first_round_runs, decided=f"the baseline {why}: not comparable")
        looks = _looks(base_set, base, criteria, first, first_round_runs)
        open_criteria = [name for name, look in looks.items() if look.undecided]
        if not looks:
            why = "no criterion could be compared" if first.status != "error" else "the first round errored"
            return Sampling(first_round_runs=first_round_runs, decided=f"{why}: extra runs would not be compared")
        if not open_criteria:
            return Sampling(
                first_round_runs=first_round_runs,
                decided="no worse than the baseline on every criterion after the first round",
            )
        parts = [_undecided_part(name, looks[name]) for name in open_criteria]
        extra = ExtraRuns(
            round=2,
            runs=list(range(first_round_runs, max_runs)),
            reason="undecided after the first round: " + "; ".join(parts),
            criteria=looks,
        )
        return Sampling(first_round_runs=first_round_runs, extra=extra)


def _looks(
    base_set: EvalSetResult,
    base: CaseResult,
    criteria: dict[str, CriterionConfig],
    first: CaseResult,
    first_round_runs: int,
) -> dict[str, CriterionLook]:
    """How each comparable criterion of a case's first round looks against the baseline's selection half."""
    looks: dict[str, CriterionLook] = {}
    for name, metric in first.metrics.items():
        base_metric = base.metrics.get(name)
        base_config, config = base_set.criteria.get(name), criteria.get(name)
        if base_metric is None or (
            base_config and config and base_config.hash and config.hash and base_config.hash != config.hash
        ):
            continue
        selection, _ = baseline_halves(base_metric)
        current, _ = current_rounds(metric, first_round_runs)
        if not current:
            continue
        if not selection:  # a one-run baseline: no half to decide with, so only more runs can tell
            looks[name] = CriterionLook(current=statistics.fmean(current), baseline=None, undecided=True)
            continue
        test = permutation_test(selection, current)
        mean_now, mean_before = statistics.fmean(current), statistics.fmean(selection)
        looks[name] = CriterionLook(
            current=round(mean_now, 6),
            baseline=round(mean_before, 6),
            p_drop=None if test is None else round(test.p_drop, 6),
            undecided=undecided(selection, current),
        )
    return looks


def _undecided_part(name: str, look: CriterionLook) -> str:
    if look.baseline is None:
        return f"{name} {look.current:.3f} (one-run baseline)"
    p = "" if look.p_drop is None else f", p = {look.p_drop:.2g}"
    return f"{name} {look.current:.3f} < baseline {look.baseline:.3f}{p}"


def decider_for(plan: Plan, baseline_path: Path | None, context: Callable[[], ActionsContext]) -> Decider | None:
    """Adaptive runs decide against a baseline: the given results file, else the config's store (`context` reads
    the Actions environment, only when a store needs it)."""
    if not has_adaptive_runs(plan):
        return None
    if baseline_path is not None:
        if not baseline_path.is_file():
            raise InputError(
                None,
                "--baseline",
                f"no results file at {baseline_path}",
                "pass a baseline results file, or --all-runs to run every case num_runs.max times",
            )
        return Decider(read_results(baseline_path))
    if plan.workflow.settings.baseline.store == "none":
        return Decider(None)
    from adk_eval_gate.baseline.stores import build_store  # the stores (and the GitHub client): adaptive runs only

    outcome = build_store(plan.workflow, context()).load()
    for warning in outcome.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    return Decider(outcome.baseline.results if outcome.baseline else None)
