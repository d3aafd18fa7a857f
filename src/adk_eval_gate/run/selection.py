"""Case selection: `--cases` selectors as `adk eval` reads them, and keeping a subset of a plan's cases."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from fnmatch import fnmatchcase
from pathlib import Path

from adk_eval_gate.core.errors import InputError, did_you_mean
from adk_eval_gate.run.plan import AgentRunPlan, EvalSetPlan, Plan


def _set_matches(pattern: str, plan: Plan, agent: AgentRunPlan, eval_set: EvalSetPlan) -> bool:
    """A selector names an eval set the way users know it: its id, its file (as in the config or `adk eval`),
    or agent/id when two agents share a set."""
    path = eval_set.file.path
    names = {eval_set.eval_set_id, f"{agent.name}/{eval_set.eval_set_id}", plan.relative(path), path.name}
    if pattern in names or any(fnmatchcase(name, pattern) for name in names):
        return True
    if any(ch in pattern for ch in "*?["):
        return False
    try:
        return Path(pattern).resolve() == path.resolve()
    except (OSError, ValueError):  # a name too long for a path, a NUL: it names no file, so no eval set
        return False


def _parse_selector(text: str, plan: Plan) -> tuple[str, list[str] | None]:
    """`set` or `set:case1,case2`; the whole text is a set first, so an id or path holding a colon still works."""
    every = [(a, s) for a in plan.agents for s in a.eval_sets]
    if ":" not in text or any(_set_matches(text, plan, a, s) for a, s in every):
        return text, None
    set_part, _, case_part = text.partition(":")
    cases = [c.strip() for c in case_part.split(",") if c.strip()]
    if not cases:
        raise InputError(
            None,
            "--cases",
            f"{text!r} names no case after the colon",
            "write eval_set_id_or_file:case1,case2 (or drop the colon for the whole set)",
        )
    return set_part, cases


def select_cases(plan: Plan, selectors: list[str]) -> Plan:
    """Only the chosen cases, as `adk eval file.evalset.json:case1,case2` chooses them (globs allowed).
    A name that matches nothing is an input error, never a silently smaller run."""
    chosen: dict[tuple[str, str], set[str] | None] = {}
    for text in selectors:
        set_part, cases = _parse_selector(text.strip(), plan)
        sets = [(a, s) for a in plan.agents for s in a.eval_sets if _set_matches(set_part, plan, a, s)]
        if not sets:
            known = sorted({s.eval_set_id for a in plan.agents for s in a.eval_sets})
            guess = did_you_mean(set_part, known)
            raise InputError(
                None,
                "--cases",
                f"no eval set {set_part!r} in {plan.workflow.path.name}",
                f"did you mean {guess!r}?" if guess else f"use an eval set id or file: {', '.join(known)}",
            )
        for agent, eval_set in sets:
            key = (agent.name, eval_set.eval_set_id)
            if cases is None:
                chosen[key] = None
                continue
            ids = [c.eval_id for c in eval_set.file.eval_set.eval_cases]
            for pattern in cases:
                hits = {i for i in ids if fnmatchcase(i, pattern)}
                if not hits:
                    guess = did_you_mean(pattern, ids)
                    raise InputError(
                        eval_set.file.path,
                        "--cases",
                        f"no case {pattern!r} in eval set {eval_set.eval_set_id!r}",
                        f"did you mean {guess!r}?" if guess else f"use one of: {', '.join(ids[:20])}",
                    )
                picked = chosen.get(key, set())
                if picked is not None:  # None: the whole eval set is chosen already
                    chosen[key] = picked | hits

    def kept(agent: str, set_id: str, eval_id: str) -> bool:
        if (agent, set_id) not in chosen:
            return False
        picked = chosen[(agent, set_id)]
        return picked is None or eval_id in picked

    return keep_cases(plan, kept)


def keep_cases(plan: Plan, wanted: Callable[[str, str, str], bool]) -> Plan:
    """The plan with only the cases `wanted(agent, eval_set_id, eval_id)` keeps; emptied eval sets and agents go."""
    agents = []
    for agent in plan.agents:
        sets = []
        for eval_set in agent.eval_sets:
            cases = [
                c for c in eval_set.file.eval_set.eval_cases if wanted(agent.name, eval_set.eval_set_id, c.eval_id)
            ]
            if not cases:
                continue
            file = replace(eval_set.file, eval_set=eval_set.file.eval_set.model_copy(update={"eval_cases": cases}))
            sets.append(replace(eval_set, file=file))
        if sets:
            agents.append(AgentRunPlan(agent.agent, tuple(sets)))
    return Plan(plan.workflow, tuple(agents))
