"""AgentEvaluator's verdict in ADK's words: one failure line per metric that missed its threshold (or could not
be scored), each followed by the turns behind it, the optional CSV of every turn, and the `AssertionError`."""

from __future__ import annotations

import csv
import io
from pathlib import Path

from adk_eval_gate.core.files import append_text
from adk_eval_gate.core.json_types import JsonObject
from adk_eval_gate.evalsets.adk_eval_schema import Invocation
from adk_eval_gate.report.adk_details import (
    MetricVerdict,
    metric_verdict,
    missed_turns,
    print_details,
    print_efficiency,
)
from adk_eval_gate.results.results_format import EvalSetResult


def _csv_rows(eval_set_id: str, eval_id: str, verdict: MetricVerdict) -> list[JsonObject]:
    return [
        {
            "eval_set_id": eval_set_id,
            "eval_id": eval_id,
            "metric_name": verdict.name,
            "threshold": verdict.threshold,
            "score": t.score,
            "eval_status": t.status.upper(),
            **t.cells(),
        }
        for t in verdict.turns
    ]


def write_csv(rows: list[JsonObject], output_file: str) -> None:
    """Appends, writing the header only for a new file (ADK's `to_csv(mode="a")`)."""
    if not rows:
        return
    path = Path(output_file)
    path.parent.mkdir(parents=True, exist_ok=True)
    buffer = io.StringIO(newline="")
    writer = csv.DictWriter(buffer, fieldnames=list(rows[0]))
    if not path.is_file():
        writer.writeheader()
    writer.writerows(rows)
    append_text(path, buffer.getvalue())  # masks any secret the agent echoed, like every file we write


def failures_for(
    result: EvalSetResult,
    expected: dict[str, list[Invocation]],
    agent_module: str,
    print_detailed_results: bool = False,
    csv_rows: list[JsonObject] | None = None,
) -> list[str]:
    """ADK's failure lines for one eval set's results, each followed by the turns behind it."""
    failures: list[str] = []
    for case in result.cases:
        for name in case.metrics:
            if case.metrics[name].status == "error":
                # A judge or metric that broke in any run is no pass, whatever the other runs' turns say.
                failures.append(f"{name} for {agent_module} could not be scored: {case.metrics[name].reason}")
                continue
            verdict = metric_verdict(case, expected.get(case.eval_id, []), name)
            if not verdict.turns:
                continue  # every run errored: reported below, as ADK reports a run without metric results
            if csv_rows is not None:
                csv_rows.extend(_csv_rows(result.eval_set_id, case.eval_id, verdict))
            if verdict.status == "not_evaluated":
                reason = case.metrics[name].reason
                failures.append(
                    f"{name} for {agent_module} was not evaluated. No score was produced, so the threshold "
                    f"of {verdict.threshold} was never checked and this is not a score regression."
                    + (f" Why: {reason}" if reason else " See the logs for why the metric could not run.")
                )
                failures.extend(missed_turns(case.eval_id, verdict))
            elif verdict.status == "failed":
                failures.append(
                    f"{name} for {agent_module} Failed. Expected {verdict.threshold}, but got {verdict.score}."
                )
                failures.extend(missed_turns(case.eval_id, verdict))
            if print_detailed_results:
                print_details(verdict)
        if print_detailed_results:
            print_efficiency(case)
        errored = [r for r in case.runs if r.error]
        if errored:
            failures.append(
                f"{case.eval_id} for {agent_module} Failed. {len(errored)} of {len(case.runs)} runs were "
                f"recorded as failed without producing any metric results. First error: {errored[0].error}"
            )
    return failures


def raise_if_failed(failures: list[str], print_detailed_results: bool) -> None:
    message = "Following are all the test failures."
    if not print_detailed_results:
        message += (
            " If you looking to get more details on the failures, then please re-run this test with "
            "`print_detailed_results` set to `True`."
        )
    # Raised, not asserted: `python -O` would drop an assert and pass a failing agent, and pytest rewrites the
    # asserts of a plugin's modules (ours is one), which would change ADK's message.
    if failures:
        raise AssertionError(message + "\n" + "\n".join(failures))
