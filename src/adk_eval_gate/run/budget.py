"""`run.max_cost_usd`: the run's spending limit, checked as each case is about to start.

Spend is the price table's estimate for the agents' model calls, the user simulator's and the judges'. A case
starts only while the spend so far is below the limit; once it is reached, every case not yet started is
`not_run`, with this reason, and counts as the gate policy says (never as a pass). Cases already running finish,
and what ran is judged and scored, so the overshoot is at most the cases in flight and their judging.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from adk_eval_gate.llm.client import UsageStats
from adk_eval_gate.llm.prices import PriceTable
from adk_eval_gate.results.results_format import Budget
from adk_eval_gate.results.usage import run_cost
from adk_eval_gate.targets.case_run import CaseRun

NOT_RUN_PREFIX = "not run: the spending limit"


@dataclass
class SpendingLimit:
    max_cost_usd: float
    prices: PriceTable
    agents_usd: float = 0.0
    judges_usd: float = 0.0
    unpriced: set[str] = field(default_factory=set)
    # per case and round: None when admitted, else why not (fixed when first asked, so a case's runs agree)
    _decisions: dict[tuple[object, ...], str | None] = field(default_factory=dict)

    @property
    def spent(self) -> float:
        return self.agents_usd + self.judges_usd

    def refusal(self) -> str:
        return (
            f"{NOT_RUN_PREFIX} run.max_cost_usd = ${self.max_cost_usd:g} was reached "
            f"(${self.spent:.4f} spent before this case could start)"
        )

    def admit(self, key: tuple[object, ...]) -> str | None:
        """`key` names one case's runs of one round: they start together or not at all."""
        if key not in self._decisions:
            self._decisions[key] = None if self.spent < self.max_cost_usd else self.refusal()
        return self._decisions[key]

    def record_run(self, run: CaseRun) -> None:
        cost, unpriced = run_cost(run, self.prices)
        self.agents_usd += cost
        self.unpriced.update(unpriced)

    def record_judges(self, total: UsageStats) -> None:
        """The judges' running total (one client serves every round)."""
        self.judges_usd = total.cost_usd
        self.unpriced.update(total.unpriced)

    def summary(self, not_run: int) -> Budget:
        return Budget(
            max_cost_usd=self.max_cost_usd,
            spent_usd=round(self.spent, 6),
            not_run=not_run,
            unpriced_models=sorted(self.unpriced),
        )
