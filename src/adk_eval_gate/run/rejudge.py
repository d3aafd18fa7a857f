"""Whether the run re-judges, and how much it may spend doing so: `run.rejudge` extra judgements for a judged turn
whose judgements disagreed, each asked only while the run's spend is below `run.max_cost_usd` (docs/judge-noise.md).

Re-judging is paid from the same spending limit as the agents and the judges' own calls. It comes after each
round's judging, so a case it crowds out is one of a later round, `not_run` by the limit as any other (never a pass);
an extra judgement refused is recorded on its turn, and that case is never called "within judge noise".
"""

from __future__ import annotations

from adk_eval_gate.criteria.judge_agreement import RejudgePolicy
from adk_eval_gate.llm.client import LlmClient, UsageStats
from adk_eval_gate.run.budget import SpendingLimit


def rejudge_policy(extra: int, limit: SpendingLimit | None, llm: LlmClient) -> RejudgePolicy | None:
    """None when the run never re-judges (`run.rejudge: 0`)."""
    if extra <= 0:
        return None

    def refusal() -> str | None:
        if limit is None:
            return None
        # the judges' spend as it stands now (the limit's own copy is updated once a round's judging ends)
        spent = limit.agents_usd + UsageStats.total(llm.stats.values()).cost_usd
        if spent < limit.max_cost_usd:
            return None
        return f"re-judging stopped: run.max_cost_usd = ${limit.max_cost_usd:g} was reached (${spent:.4f} spent)"

    return RejudgePolicy(extra, refusal)
