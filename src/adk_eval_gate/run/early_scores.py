"""Cases scored while the run goes on: a case whose score no judge and no adaptive round can change is scored as
its last run arrives from a worker process, so the end of the run has only the last few cases left to score.

An early entry is used only if the runs it was scored from are exactly the runs the run ends with (the same
objects, in the same order), so an early entry never differs from one scored at the end. Entries are kept by agent
name, eval set and case (never by a target's `id()`), and hold the runs they were scored from.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from adk_eval_gate.config.workflow_settings import AdaptiveRuns
from adk_eval_gate.criteria.engine.criterion import MetricOutcome, SomeCriterion
from adk_eval_gate.evalsets.adk_eval_schema import EvalCase
from adk_eval_gate.llm.prices import PriceTable
from adk_eval_gate.results.build import case_result
from adk_eval_gate.results.results_format import CaseResult, Sampling
from adk_eval_gate.results.usage import run_usage
from adk_eval_gate.run.budget import NOT_RUN_PREFIX
from adk_eval_gate.run.plan import Plan
from adk_eval_gate.targets import CaseRun

# One case's judged outcomes, computed before it is scored: (run, criterion) → outcome (criteria/judging.py).
Judged = Mapping[tuple[int, str], MetricOutcome]


def case_entry(
    case: EvalCase,
    runs: list[CaseRun],
    criteria: Sequence[SomeCriterion],
    judged: Judged | None,
    sampling: Sampling | None,
    prices: PriceTable,
) -> CaseResult:
    """A case's entry in the results file, scored over all its runs."""
    from adk_eval_gate.criteria.engine.scoring import score_case

    result = case_result(case, score_case(case, runs, criteria, judged), runs)
    for record, run in zip(result.runs, runs, strict=True):
        record.usage = run_usage(run, prices)
    result.sampling = sampling
    refused = [run for run in runs if run.error is not None and run.error.startswith(NOT_RUN_PREFIX)]
    if refused and len(refused) == len(runs):
        result.status, result.reason = "not_run", refused[0].error
    return result


class EarlyScores:
    def __init__(self, plan: Plan, runs_per_case: list[int], decided: bool, prices: PriceTable):
        """Eval sets qualify when none of their criteria waits on a judge and their agent's runs are fixed:
        `runs_per_case` (one per agent) is final unless the agent is adaptive and `decided` (a decider may add
        a second round)."""
        self._prices = prices
        self._settled: dict[tuple[str, str], tuple[tuple[SomeCriterion, ...], int, dict[str, EvalCase]]] = {}
        for agent, expected in zip(plan.agents, runs_per_case, strict=True):
            if decided and isinstance(agent.num_runs, AdaptiveRuns):
                continue
            for eval_set in agent.eval_sets:
                if all(c.spec.judge_scorer is None for c in eval_set.criteria):
                    cases = {case.eval_id: case for case in eval_set.file.eval_set.eval_cases}
                    self._settled[(agent.name, eval_set.eval_set_id)] = (eval_set.criteria, expected, cases)
        self._runs: dict[tuple[str, str, str], list[CaseRun]] = {}
        self._entries: dict[tuple[str, str, str], tuple[tuple[CaseRun, ...], CaseResult]] = {}

    def recorder(self, agent: str) -> Callable[[CaseRun], None] | None:
        """What a worker pool calls with each run it receives for the agent named `agent`, or None when nothing
        qualifies."""
        if not any(key[0] == agent for key in self._settled):
            return None
        return lambda run: self._add(agent, run)

    def _add(self, agent: str, run: CaseRun) -> None:
        settled = self._settled.get((agent, run.eval_set_id))
        if settled is None:
            return
        criteria, expected, cases = settled
        key = (agent, run.eval_set_id, run.eval_id)
        runs = self._runs.setdefault(key, [])
        runs.append(run)
        if len(runs) == expected and run.eval_id in cases:
            runs.sort(key=lambda r: r.run)
            try:
                entry = case_entry(cases[run.eval_id], runs, criteria, None, None, self._prices)
            except Exception:  # scored again at the end, where a failure is reported as it always was
                return
            self._entries[key] = (tuple(runs), entry)

    def get(self, agent: str, eval_set_id: str, eval_id: str, runs: list[CaseRun]) -> CaseResult | None:
        entry = self._entries.get((agent, eval_set_id, eval_id))
        if entry is None or len(entry[0]) != len(runs):
            return None
        return entry[1] if all(scored is run for scored, run in zip(entry[0], runs, strict=True)) else None
