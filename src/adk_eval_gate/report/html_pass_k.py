"""The page's pass^k data (report.html's "Reliability" section, assets/reliability.js; docs/pass-k.md).

    "pass_k": [{"key": "agent/eval set", "agent", "eval_set_id", "k", "value" | null, "low" | null,
                "high" | null, "cases": count with a threshold, "short": [eval_id with fewer than k runs],
                "tallies": {eval_id: [runs passed, runs]}, "compared": comparison.PassKRow as JSON | null}]

k is `gate.pass_k.k` where the comparison has its rows, else the fewest runs a case of the eval set had (pass^n:
every run passed); an eval set without a case with a threshold is left out.
"""

from __future__ import annotations

from adk_eval_gate.baseline.comparison_format import Comparison
from adk_eval_gate.baseline.pass_k import set_estimate, tallies
from adk_eval_gate.core.json_types import JsonObject
from adk_eval_gate.results.results_format import ResultsFile


def pass_k_data(results: ResultsFile, comparison: Comparison | None) -> list[JsonObject]:
    compared = {(r.agent, r.eval_set_id): r for r in comparison.pass_k} if comparison else {}
    found = []
    for eval_set in results.eval_sets:
        counts = tallies(eval_set)
        if not counts:
            continue
        row = compared.get((eval_set.agent, eval_set.eval_set_id))
        k = row.k if row is not None else max(1, min(runs for _, runs in counts.values()))
        estimate = set_estimate(counts, k)
        low, high = estimate.bounds if estimate.bounds is not None else (None, None)
        found.append(
            {
                "key": f"{eval_set.agent}/{eval_set.eval_set_id}",
                "agent": eval_set.agent,
                "eval_set_id": eval_set.eval_set_id,
                "k": k,
                "value": estimate.value,
                "low": low,
                "high": high,
                "cases": estimate.cases,
                "short": list(estimate.short),
                "tallies": {eid: list(tally) for eid, tally in counts.items()},
                "compared": row.model_dump(mode="json") if row is not None else None,
            }
        )
    return found
