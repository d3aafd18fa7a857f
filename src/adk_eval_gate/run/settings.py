"""The run's settings, read off the workflow once: the runner's pool, the worker processes, the model client
shared by the judges and the user simulator."""

from __future__ import annotations

import os
from pathlib import Path

from adk_eval_gate.llm.client import LlmSettings
from adk_eval_gate.llm.prices import Price, PriceTable
from adk_eval_gate.run.plan import AgentRunPlan, Plan
from adk_eval_gate.targets.runner import RunnerSettings
from adk_eval_gate.targets.simulation import SimulationSettings


def runner_settings(plan: Plan) -> RunnerSettings:
    run = plan.workflow.settings.run
    workers = None if run.workers == "auto" else run.workers
    return RunnerSettings(
        concurrency=run.concurrency,
        timeout=run.timeout,
        retries=run.retries,
        job_timeout=run.job_timeout,
        workers=workers,
    )


def worker_count(settings: RunnerSettings, jobs: int) -> int:
    """Worker processes pay off once there are more jobs than concurrency slots: then ADK's own CPU per model
    call, not the model's latency, bounds one event loop. One per core: on two cores, three or four workers
    sharing the same concurrency were no faster (and each costs memory)."""
    if settings.workers is not None:
        return settings.workers
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return min(cores, 8) if jobs > settings.concurrency else 1


def cache_dir(plan: Plan) -> Path | None:
    value = plan.workflow.settings.judge.cache
    if not value:
        return None
    return Path(value) if Path(value).is_absolute() else plan.workflow.base_dir / value


def llm_settings(plan: Plan) -> LlmSettings:
    """One model-client configuration for the judges and the user simulator: the workflow's `judge:` section."""
    section = plan.workflow.settings.judge
    prices = PriceTable.with_overrides({model: Price(p.input, p.output) for model, p in section.prices.items()})
    return LlmSettings(
        concurrency=section.concurrency,
        timeout=section.timeout,
        retries=section.retries,
        max_calls=section.max_calls,
        max_tokens=section.max_tokens,
        base_url=section.base_url,
        prices=prices,
    )


def simulation_settings(plan: Plan, agent: AgentRunPlan) -> SimulationSettings:
    return SimulationSettings(
        configs={s.eval_set_id: s.user_simulator_config for s in agent.eval_sets},
        llm=llm_settings(plan),
        cache_dir=cache_dir(plan),
    )
