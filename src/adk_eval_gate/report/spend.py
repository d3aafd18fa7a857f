"""One footer line on what the run spent: judge calls (and how many the cache saved), agent and user-simulator
tokens, and the estimated cost from the price table ("cost unknown" when a model has no price)."""

from __future__ import annotations

from adk_eval_gate.results.results_format import ResultsFile


def _tokens(count: int) -> str:
    return (
        f"{count / 1_000_000:.1f}M" if count >= 1_000_000 else f"{count / 1000:.1f}k" if count >= 1000 else str(count)
    )


def _cost(value: float | None) -> str:
    if value is None:
        return "cost unknown"
    return f"≈${value:.2f}" if value >= 0.01 or value == 0 else "<$0.01"


def _total_cost(costs: list[float | None]) -> str:
    return _cost(None if None in costs else sum(c for c in costs if c is not None))


def spend_line(results: ResultsFile) -> str:
    parts = []
    judge = results.judge
    if judge.calls or judge.cache_hits:
        asked = judge.calls + judge.cache_hits
        parts.append(
            f"judge: {judge.calls} calls, {judge.cache_hits} cached ({100 * judge.cache_hits / asked:.0f}%), "
            f"{_tokens(judge.input_tokens + judge.output_tokens)} tokens, {_cost(judge.cost_usd)}"
        )
    calls = sum(u.model_calls for u in results.agent_usage.values())
    tokens = sum(u.input_tokens + u.output_tokens for u in results.agent_usage.values())
    if tokens:
        parts.append(
            f"agent: {calls} model calls, {_tokens(tokens)} tokens, "
            f"{_total_cost([u.cost_usd for u in results.agent_usage.values()])}"
        )
    simulators = [u.user_simulator for u in results.agent_usage.values() if u.user_simulator]
    if simulators:
        parts.append(
            f"user simulator: {sum(s.calls for s in simulators)} calls, {sum(s.cache_hits for s in simulators)} "
            "cached, "
            f"{_total_cost([s.cost_usd for s in simulators])}"
        )
    return " · ".join(parts)
