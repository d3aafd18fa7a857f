"""What `validate` says before anything runs: each target starts (actuals parse, the agent imports), each
criterion that will not be scored says why (no judge credentials, no Google Cloud project, no code), what each
eval-set glob matched, and how large a drop each agent's gate can confirm (a gate that cannot fail is a warning)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

from adk_eval_gate.baseline.power_report import SetDesign, assess, pushed_baseline_runs
from adk_eval_gate.config.globs import GlobTooWide, walk_glob
from adk_eval_gate.config.offline import OFFLINE_COMMAND
from adk_eval_gate.config.workflow_settings import AdaptiveRuns, is_glob
from adk_eval_gate.criteria.engine.vertex_service import missing_project
from adk_eval_gate.criteria.vertex_metrics import VERTEX_METRICS
from adk_eval_gate.llm.client import has_credentials
from adk_eval_gate.run.plan import AgentRunPlan, EvalSetPlan, Plan
from adk_eval_gate.targets import build_target
from adk_eval_gate.targets.model_credentials import MissingCredentials
from adk_eval_gate.targets.model_reach import UnreachableModel


def check_targets(plan: Plan) -> list[str]:
    """Starts each target (its agent imports); what a run will need that is not set here (a model's key) is not
    a config error: said as a note with the way to run without it, so `validate && ci --offline` goes on."""
    needs: list[str] = []

    async def start_each() -> None:
        for agent in plan.agents:
            target = build_target(agent.agent, plan.workflow.base_dir)
            try:
                await target.start()
            except UnreachableModel as unreachable:  # the network here, not the config: a run elsewhere may reach it
                needs.append(f"note: {agent.name}: {unreachable.problem}; {unreachable.fix}")
            except MissingCredentials as missing:
                needs.append(
                    f"note: {agent.name}: the run will need GOOGLE_API_KEY (or GOOGLE_GENAI_USE_VERTEXAI=TRUE with "
                    f"GOOGLE_CLOUD_PROJECT) for model {missing.model}; without it: {OFFLINE_COMMAND} "
                    "(plays the eval set's expected turns: tests tools, wiring and scoring, not the model)"
                )
            finally:
                await target.aclose()

    asyncio.run(start_each())
    return needs


def plan_lines(plan: Plan) -> Iterator[str]:
    for agent in plan.agents:
        cases = sum(len(s.file.eval_set.eval_cases) for s in agent.eval_sets)
        kind = agent.agent.settings.target.kind
        yield f"{agent.name}: {len(agent.eval_sets)} eval set(s), {cases} case(s), target {kind}"
        yield from _glob_lines(plan, agent)
        for eval_set in agent.eval_sets:
            names = ", ".join(c.name for c in eval_set.criteria)
            yield (
                f"  {plan.relative(eval_set.file.path)} [{eval_set.eval_set_id}]: "
                f"{len(eval_set.file.eval_set.eval_cases)} case(s); criteria ({eval_set.criteria_source}): {names}"
            )
            yield from _criteria_notes(eval_set)


def _criteria_notes(eval_set: EvalSetPlan) -> Iterator[str]:
    for criterion in eval_set.criteria:
        if criterion.spec.unavailable_reason:
            yield f"    note: {criterion.name} will be reported as not evaluated: {criterion.spec.unavailable_reason}"
        elif criterion.name in VERTEX_METRICS:
            if missing := missing_project(criterion.name):
                yield f"    note: {missing}; until then it will be reported as not evaluated"
        elif criterion.spec.judged and not has_credentials():
            yield (
                f"    note: {criterion.name} needs a judge: without GOOGLE_API_KEY (or Vertex AI settings) "
                "it will be reported as not evaluated"
            )


def _glob_lines(plan: Plan, agent: AgentRunPlan) -> Iterator[str]:
    """What each glob matched: a file added to the folder later is gated, and one it misses is seen here."""
    for pattern in agent.agent.settings.evalsets:
        if not is_glob(pattern):
            continue
        try:
            found = walk_glob(plan.workflow.base_dir / pattern)
        except GlobTooWide:  # the loader refused it already; nothing to list
            continue
        names = ", ".join(plan.relative(path) for path in found)
        yield f"  evalsets {pattern!r} matched {len(found)} file(s): {names}"


def plan_designs(plan: Plan) -> list[SetDesign]:
    """Every eval set as the gate will weigh it, the baseline made as a push to the default branch makes it."""
    designs = []
    for agent in plan.agents:
        runs = agent.num_runs
        first, most = (runs.min, runs.max) if isinstance(runs, AdaptiveRuns) else (runs, runs)
        for eval_set in agent.eval_sets:
            designs.append(
                SetDesign(
                    agent.name,
                    eval_set.eval_set_id,
                    len(eval_set.file.eval_set.eval_cases),
                    tuple(c.name for c in eval_set.criteria),
                    pushed_baseline_runs(first, most),
                    first,
                    most,
                )
            )
    return designs


def power_lines(plan: Plan) -> Iterator[str]:
    """Per agent, the smallest drop its gate can confirm at `gate.alpha`; a warning when it can confirm none."""
    gate = plan.workflow.settings.gate
    for power in assess(plan_designs(plan), gate):
        yield f"{power.agent}: power at alpha {gate.alpha:g} ({power.family} gating verdict(s) in the run):"
        for line in power.lines:
            yield f"  {line.statement}"
        for line in power.lines[-1:] if not power.weak else []:
            # the verdict that weighs every case (the pooled one, with two or more eval sets) decides what is unknown
            if line.unconfirmed_up_to is not None:
                yield (
                    f"  note: a drop from {100 * gate.tolerance_for('default'):g} to {line.unconfirmed_up_to:g} points "
                    f"({line.scope}) is too small for these runs to confirm or rule out: it is unconfirmed, and "
                    f"gate.unconfirmed: {gate.unconfirmed} {'fails' if gate.unconfirmed == 'fail' else 'reports'} it"
                    + (f"; `{power.suggestion}` would confirm every drop beyond tolerance" if power.suggestion else "")
                )
        if power.weak:
            fix = (
                f"set `{power.suggestion}` (the default branch's push then runs the maximum)"
                if power.suggestion
                else "no num_runs up to max 20 would: add cases, or raise gate.alpha"
            )
            yield f"warning: {power.agent}: no regression can fail this gate, whatever its size; {fix}"
