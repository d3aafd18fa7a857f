"""A run's joins (runs to their case, cut extra runs to their sampling, early entries to their case) go by the
agent's name its jobs carry, never by which target object ran them (issue #30: an `id()` can be reused)."""

from __future__ import annotations

from adk_eval_gate.core.keys import CaseKey
from adk_eval_gate.evalsets.adk_eval_schema import EvalCase
from adk_eval_gate.llm.prices import PriceTable
from adk_eval_gate.results.results_format import ExtraRuns, Sampling
from adk_eval_gate.run.agent_job import AgentJob
from adk_eval_gate.run.budget import NOT_RUN_PREFIX
from adk_eval_gate.run.early_scores import EarlyScores
from adk_eval_gate.run.plan import build_plan
from adk_eval_gate.run.rounds import Rounds, drop_cut_extra_runs
from adk_eval_gate.targets.case_run import CaseRun

CASE = EvalCase.model_validate({"eval_id": "c", "conversation": []})


def _job(target: object, agent: str, run: int) -> AgentJob:
    return AgentJob(target, "s", CASE, run, agent)  # type: ignore[arg-type]  # any object stands for a target


def test_runs_are_grouped_by_the_agent_their_job_names_not_by_the_target_object():
    shared, other = object(), object()
    rounds = Rounds()
    # one target object serving two agents, and one agent served by two target objects (as after a restart)
    jobs = [_job(shared, "a", 1), _job(shared, "b", 0), _job(other, "a", 0)]
    runs = [CaseRun("s", "c", job.run, ()) for job in jobs]
    rounds.add(jobs, runs, {})
    grouped = rounds.by_case()
    assert sorted(grouped) == ["a", "b"]
    assert grouped["a"]["s"]["c"] == [runs[2], runs[0]]  # in run order
    assert grouped["b"]["s"]["c"] == [runs[1]]


def test_an_extra_run_the_limit_cut_is_taken_off_its_own_agents_sampling():
    target = object()
    sampling = {
        CaseKey(agent, "s", "c"): Sampling(first_round_runs=1, extra=ExtraRuns(round=2, runs=[1, 2], reason="unsure"))
        for agent in ("a", "b")
    }
    cut = CaseRun("s", "c", 1, (), error=f"{NOT_RUN_PREFIX} was reached")
    kept_jobs, kept_runs = drop_cut_extra_runs([_job(target, "b", 1)], [cut], sampling)
    assert (kept_jobs, kept_runs) == ([], [])
    assert sampling[CaseKey("b", "s", "c")].extra.runs == [2]
    assert sampling[CaseKey("a", "s", "c")].extra.runs == [1, 2]  # the other agent's, on the same target: untouched


def test_an_early_entry_is_only_ever_its_own_agents(example):
    plan = build_plan(example / "eval-gate.yml")
    agent, eval_set = plan.agents[0], plan.agents[0].eval_sets[0]
    case = eval_set.file.eval_set.eval_cases[0]
    early = EarlyScores(plan, [1], False, PriceTable.with_overrides({}))
    run = CaseRun(eval_set.eval_set_id, case.eval_id, 0, tuple(case.conversation))
    early.recorder(agent.name)(run)
    assert early.get(agent.name, eval_set.eval_set_id, case.eval_id, [run]) is not None
    assert early.get("another", eval_set.eval_set_id, case.eval_id, [run]) is None
    assert early.recorder("another") is None  # an agent the plan does not have records nothing
