"""A local baseline file as a first-class path: `ci --baseline FILE` and `baseline update --baseline FILE` name it
without editing the config, and `baseline update` says what a baseline holds (runs a case, the power they give)
and refuses one made at fewer runs than the range's max, which would turn a deterministic break into noise."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import TYPE_CHECKING

from adk_eval_gate.core.errors import InputError

if TYPE_CHECKING:
    from adk_eval_gate.config.loader import Workflow
    from adk_eval_gate.results.results_format import ResultsFile
    from adk_eval_gate.run.plan import Plan

MAKE_ONE = "make one with `adk-eval-gate run --all-runs --output {path}` (every case at num_runs' max)"


def with_baseline_file(workflow: Workflow, value: str, *, must_exist: bool = True) -> Workflow:
    """The workflow with its baseline store replaced by the file `value` (relative to the working directory, as a
    path typed on the command line is); a missing file is bad input unless the command is to write it."""
    from adk_eval_gate.config.workflow_settings import FileBaseline

    path = Path(value).resolve()
    if must_exist and not path.is_file():
        raise InputError(None, "--baseline", f"no results file at {value}", MAKE_ONE.format(path=value))
    settings = workflow.settings.model_copy(update={"baseline": FileBaseline(store="file", path=str(path))})
    return dataclasses.replace(workflow, settings=settings)


def unwritable_store(workflow: Workflow) -> str | None:
    """Why `baseline update` cannot write the config's store from here (None: it can)."""
    store = workflow.settings.baseline.store
    if store == "artifact":
        return (
            "is artifact, which nothing here can write: its baseline is the results a push run on the default "
            "branch uploads; nothing was written"
        )
    if store == "none":
        return "is none: there is nowhere to write a baseline; nothing was written"
    return None


def _configured_max(plan: Plan) -> dict[str, int]:
    from adk_eval_gate.config.workflow_settings import AdaptiveRuns

    out = {}
    for agent in plan.agents:
        runs = agent.num_runs
        out[agent.name] = runs.max if isinstance(runs, AdaptiveRuns) else runs
    return out


def few_runs(results: ResultsFile, plan: Plan) -> list[tuple[str, int, int]]:
    """Each eval set whose cases hold fewer runs than its agent's num_runs max: (agent/eval set, fewest, max)."""
    most = _configured_max(plan)
    out = []
    for eval_set in results.eval_sets:
        held = [len(case.runs) for case in eval_set.cases if case.runs]
        wanted = most.get(eval_set.agent, eval_set.num_runs)
        if held and min(held) < wanted:
            out.append((f"{eval_set.agent}/{eval_set.eval_set_id}", min(held), wanted))
    return out


def refuse_few_runs(results: ResultsFile, plan: Plan, results_path: str) -> None:
    """A baseline at fewer runs than the range's max cannot confirm a break the configured range could: refused,
    with the command that makes one at the max."""
    short = few_runs(results, plan)
    if not short:
        return
    where, fewest, wanted = short[0]
    raise InputError(
        results_path,
        None,
        f"holds {fewest} run(s) a case for {where}, fewer than num_runs' max {wanted}: as a baseline it cannot "
        "confirm a drop the configured runs could, so a broken case would read as noise",
        f"{MAKE_ONE.format(path=results_path)} and update from that, or pass --allow-few-runs to store it anyway",
    )


def _first_runs(plan: Plan) -> dict[str, int]:
    from adk_eval_gate.config.workflow_settings import AdaptiveRuns

    return {a.name: a.num_runs.min if isinstance(a.num_runs, AdaptiveRuns) else a.num_runs for a in plan.agents}


def held_lines(results: ResultsFile, plan: Plan) -> list[str]:
    """What a baseline holds, per eval set (cases × runs a case), and the power a pull request compared with it has
    (run as the config runs it)."""
    from adk_eval_gate.baseline.power_report import assess, designs_from_results

    lines = []
    for eval_set in results.eval_sets:
        held = sorted({len(case.runs) for case in eval_set.cases if case.runs})
        runs = "no runs" if not held else f"{held[0]}" if len(held) == 1 else f"{held[0]}–{held[-1]}"
        lines.append(f"  {eval_set.agent}/{eval_set.eval_set_id}: {len(eval_set.cases)} cases × {runs} run(s) a case")
    fewest = {
        (s.agent, s.eval_set_id): min((len(c.runs) for c in s.cases if c.runs), default=s.num_runs)
        for s in results.eval_sets
    }
    # the runs it really holds, not the num_runs it declares: an adaptive run that extended nothing declares its max
    first, most = _first_runs(plan), _configured_max(plan)
    designs = [
        dataclasses.replace(
            d,
            baseline_runs=fewest[(d.agent, d.eval_set_id)],
            first_runs=first.get(d.agent, d.first_runs),
            max_runs=most.get(d.agent, d.max_runs),
        )
        for d in designs_from_results(results, results)
    ]
    for power in assess(designs, plan.workflow.settings.gate):
        lines.extend(f"  power, {power.agent}: {line.statement}" for line in power.lines)
    return lines
