"""Results made `--offline` (the model played from the expected turns: config/offline.py) never meet real ones.

Such results test the agent's tools, wiring and our scoring, not the model: compared with a real baseline they
would report the model's own misses as regressions fixed, or a real run's as regressions. Two offline results
compare (a wiring change checked offline, before and after); a mixed pair is refused in one line, and an offline
results file is never a baseline (run/shards.py `why_not_a_baseline`).
"""

from __future__ import annotations

from pathlib import Path

from adk_eval_gate.core.errors import InputError
from adk_eval_gate.results.results_format import ResultsFile


def mixed(current: ResultsFile, baseline: ResultsFile, source: str) -> str | None:
    """Why these two are not comparable (one side's model played offline, the other's not), or None."""
    if bool(current.offline) == bool(baseline.offline):
        return None
    played = "these results were" if current.offline else f"the baseline ({source}) was"
    other = "the baseline" if current.offline else "these results"
    return f"{played} made with --offline (the model played from the expected turns) and {other} not: not comparable"


def refuse_mixed(current: ResultsFile, current_path: Path | str, baseline: ResultsFile | None, source: str) -> None:
    """One line, exit 2, when one side's model was played offline and the other's was not."""
    if baseline is None or (problem := mixed(current, baseline, source)) is None:
        return
    raise InputError(
        current_path,
        "offline",
        problem,
        "compare an offline run with an offline one, or a run of the agent's own model with a real baseline",
    )


def offline_failures(results: ResultsFile) -> str | None:
    """What fails an offline run: with the model played from the expected turns, a case that misses its thresholds
    (or cannot run) shows a tool, its arguments or the wiring not doing what the eval set expects. An offline run
    has no baseline, so this, not a comparison, is its verdict; judged criteria not evaluated (no key) do not count."""
    if not results.offline:
        return None
    failed, errors = results.summary.failed, results.summary.error
    if not failed and not errors:
        return None
    return (
        f"offline: FAIL — {failed} case(s) failed, {errors} error(s) with the model played from the expected turns: "
        "a tool, its arguments or the agent's wiring does not do what the eval set expects"
    )
