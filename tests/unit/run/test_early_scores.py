"""Cases scored as their last run arrives must be exactly what scoring at the end gives, and never stand in for
other runs."""

from __future__ import annotations

import dataclasses

from adk_eval_gate.llm.prices import PriceTable
from adk_eval_gate.run.early_scores import EarlyScores, case_entry
from adk_eval_gate.run.plan import build_plan
from adk_eval_gate.targets.case_run import CaseRun


def _setup(example, runs_per_case: int = 1):
    plan = build_plan(example / "eval-gate.yml")
    agent = plan.agents[0]
    eval_set = agent.eval_sets[0]
    early = EarlyScores(plan, [runs_per_case], False, PriceTable.with_overrides({}))
    return agent.name, eval_set, early


def _run(eval_set, case, number: int) -> CaseRun:
    # The expected conversation as the agent's answer: a run every criterion can score.
    return CaseRun(eval_set.eval_set_id, case.eval_id, number, tuple(case.conversation))


def test_an_entry_scored_early_equals_one_scored_at_the_end(example):
    agent, eval_set, early = _setup(example, runs_per_case=2)
    record = early.recorder(agent)
    case = eval_set.file.eval_set.eval_cases[0]
    second, first = _run(eval_set, case, 1), _run(eval_set, case, 0)
    record(second)  # runs arrive in any order
    assert early.get(agent, eval_set.eval_set_id, case.eval_id, [first, second]) is None  # not all runs yet
    record(first)
    got = early.get(agent, eval_set.eval_set_id, case.eval_id, [first, second])
    late = case_entry(case, [first, second], eval_set.criteria, None, None, PriceTable.with_overrides({}))
    assert got is not None and got.model_dump() == late.model_dump()


def test_an_early_entry_never_stands_in_for_other_runs(example):
    agent, eval_set, early = _setup(example)
    case = eval_set.file.eval_set.eval_cases[0]
    arrived = _run(eval_set, case, 0)
    early.recorder(agent)(arrived)
    retried = dataclasses.replace(arrived)  # equal, but not the run the entry was scored from
    assert early.get(agent, eval_set.eval_set_id, case.eval_id, [arrived]) is not None
    assert early.get(agent, eval_set.eval_set_id, case.eval_id, [retried]) is None


def test_eval_sets_a_judge_or_a_second_round_can_change_are_left_to_the_end(example):
    config = example / "eval-gate.yml"
    config.write_text(config.read_text().replace("num_runs: {min: 2, max: 10}", "num_runs: {min: 1, max: 3}"))
    plan = build_plan(config)
    agent = plan.agents[0].name
    assert EarlyScores(plan, [1], True, PriceTable.with_overrides({})).recorder(agent) is None
    assert EarlyScores(plan, [3], False, PriceTable.with_overrides({})).recorder(agent) is not None
