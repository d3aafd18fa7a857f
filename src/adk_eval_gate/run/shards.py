"""Splitting a suite across CI jobs, and putting the pieces back together.

A case belongs to shard `hash(agent, eval set, case) mod n`: the same split on every machine and every run, and
adding a case moves no other case. `merge_results` unions shard results into one results file, which is then
compared, reported and gated as a whole.
"""

from __future__ import annotations

import hashlib
from dataclasses import replace
from typing import Any

from pydantic import BaseModel

from adk_eval_gate.core.clip import short_sha
from adk_eval_gate.core.errors import InputError
from adk_eval_gate.core.keys import CaseKey
from adk_eval_gate.results.build import case_hash, count, new_run_id, workflow_run_of
from adk_eval_gate.results.provenance import merged_provenance
from adk_eval_gate.results.results_format import ResultsFile
from adk_eval_gate.run.plan import AgentRunPlan, EvalSetPlan, Plan


def parse_shard(text: str) -> tuple[int, int]:
    try:
        index, total = (int(part) for part in text.split("/"))
    except ValueError:
        raise InputError(None, "--shard", f"{text!r} is not i/n", "write e.g. --shard 2/4") from None
    if not 1 <= index <= total:
        raise InputError(None, "--shard", f"{text!r} is out of range", "use 1 <= i <= n") from None
    return index, total


def shard_of(agent: str, eval_set_id: str, eval_id: str, total: int) -> int:
    digest = hashlib.sha256(f"{agent}\\0{eval_set_id}\\0{eval_id}".encode()).digest()
    return int.from_bytes(digest[:8], "big") % total + 1


def shard_plan(plan: Plan, index: int, total: int) -> Plan:
    agents = []
    for agent in plan.agents:
        sets = []
        for eval_set in agent.eval_sets:
            cases = [
                c
                for c in eval_set.file.eval_set.eval_cases
                if shard_of(agent.name, eval_set.eval_set_id, c.eval_id, total) == index
            ]
            if cases:
                file = replace(eval_set.file, eval_set=eval_set.file.eval_set.model_copy(update={"eval_cases": cases}))
                sets.append(
                    EvalSetPlan(file, eval_set.criteria, eval_set.criteria_source, eval_set.user_simulator_config)
                )
        if sets:
            agents.append(AgentRunPlan(agent.agent, tuple(sets)))
    return Plan(plan.workflow, tuple(agents))


def merge_results(parts: list[tuple[str, ResultsFile]], plan: Plan | None = None) -> ResultsFile:
    """`parts` are (file name, results) pairs: errors name the files. With `plan`, every shard must come from it."""
    if not parts:
        raise InputError(None, "merge", "no results files given", "pass every shard's results.json")
    if plan is not None:
        for name, part in parts:
            check_shard_matches(part, name, plan)
    workflow_run = check_one_run(parts)
    merged = parts[0][1].model_copy(deep=True)
    merged.run_id = f"{workflow_run}.{new_run_id().rsplit('.', 1)[1]}" if workflow_run else new_run_id()
    by_set = {(s.agent, s.eval_set_id): s for s in merged.eval_sets}
    owner = {CaseKey(s.agent, s.eval_set_id, c.eval_id): parts[0][0] for s in merged.eval_sets for c in s.cases}
    for name, part in parts[1:]:
        merged.interrupted = merged.interrupted or part.interrupted
        merged.stop_reason = merged.stop_reason or part.stop_reason
        merged.offline = merged.offline or part.offline  # one shard played offline marks the whole (never a baseline)
        merged.judge = _summed(merged.judge, part.judge)
        merged.agent_usage = _summed(merged.agent_usage, part.agent_usage)
        merged.provenance = merged_provenance(merged.provenance, part.provenance)
        merged.timings.duration_seconds = max(merged.timings.duration_seconds, part.timings.duration_seconds)
        merged.timings.inference_seconds = max(merged.timings.inference_seconds, part.timings.inference_seconds)
        merged.timings.finished_at = max(merged.timings.finished_at, part.timings.finished_at)
        for eval_set in part.eval_sets:
            key = (eval_set.agent, eval_set.eval_set_id)
            for case in eval_set.cases:
                case_key = CaseKey(*key, case.eval_id)
                if case_key in owner:
                    raise InputError(
                        name,
                        "merge",
                        f"case {case.eval_id!r} of {key[0]}/{key[1]} is also in {owner[case_key]}",
                        "give each shard a different --shard i/n",
                    )
                owner[case_key] = name
            if key not in by_set:
                by_set[key] = eval_set.model_copy(deep=True)
                merged.eval_sets.append(by_set[key])
                continue
            target = by_set[key]
            if target.criteria != eval_set.criteria:
                raise InputError(
                    name,
                    "merge",
                    f"its criteria of {key[0]}/{key[1]} differ from {parts[0][0]}'s",
                    "merge results of the same config and commit",
                )
            target.cases.extend(c.model_copy(deep=True) for c in eval_set.cases)
    for eval_set in merged.eval_sets:
        eval_set.summary = count(c.status for c in eval_set.cases)
    merged.summary = count(c.status for s in merged.eval_sets for c in s.cases)
    budgets = [part.budget for _, part in parts if part.budget is not None]
    if budgets:  # each shard had the limit to itself: the merged run shows what they spent together
        merged.budget = budgets[0].model_copy(
            update={
                "spent_usd": round(sum(b.spent_usd for b in budgets), 6),
                "not_run": sum(b.not_run for b in budgets),
                "unpriced_models": sorted({m for b in budgets for m in b.unpriced_models}),
            }
        )
    return merged


def check_one_run(parts: list[tuple[str, ResultsFile]]) -> str | None:
    """Shards of one run: one commit, and in GitHub Actions one workflow run (their run ids lead with it). Shards
    of different runs would be gated, reported and stored as one run that never happened. The workflow run they
    share, if any."""
    first_name, first = parts[0]
    runs = {workflow_run_of(part.run_id) for _, part in parts} - {None, "local"}
    for name, part in parts[1:]:
        if first.git.sha and part.git.sha and part.git.sha != first.git.sha:
            raise InputError(
                name,
                "git.sha",
                f"ran at commit {short_sha(part.git.sha)}, {first_name} at {short_sha(first.git.sha)}",
                "merge the shards of one run, at one commit",
            )
        theirs, ours = workflow_run_of(part.run_id), workflow_run_of(first.run_id)
        if len(runs) > 1 and theirs != ours:
            raise InputError(
                name,
                "run_id",
                f"is from workflow run {theirs}, {first_name} from {ours}",
                "merge the shards of one workflow run (download this run's artifacts only)",
            )
    return runs.pop() if runs else None


def check_shard_matches(part: ResultsFile, name: str, plan: Plan) -> None:
    """A shard of another config (or another version of its eval sets) would be gated as if it were this one."""
    fix = "merge the shards this config produced, at this commit"
    if part.config_file != plan.workflow.path.name:
        raise InputError(name, "config_file", f"{part.config_file!r} is not {plan.workflow.path.name!r}", fix)
    expected = {(a.name, s.eval_set_id): s for a in plan.agents for s in a.eval_sets}
    for eval_set in part.eval_sets:
        key = (eval_set.agent, eval_set.eval_set_id)
        if key not in expected:
            raise InputError(name, "eval_sets", f"{key[0]}/{key[1]} is not in {plan.workflow.path.name}", fix)
        if set(eval_set.criteria) != {c.name for c in expected[key].criteria}:
            raise InputError(name, "eval_sets", f"the criteria of {key[0]}/{key[1]} are not the config's", fix)
        hashes = {c.eval_id: case_hash(c) for c in expected[key].file.eval_set.eval_cases}
        for case in eval_set.cases:
            if case.eval_id not in hashes:
                raise InputError(name, "eval_sets", f"case {case.eval_id!r} is not in {key[0]}/{key[1]}", fix)
            if case.case_hash and case.case_hash != hashes[case.eval_id]:
                raise InputError(
                    name, "eval_sets", f"case {case.eval_id!r} of {key[0]}/{key[1]} differs from the eval set's", fix
                )


def why_not_a_baseline(results: ResultsFile, plan: Plan) -> str | None:
    """A baseline must be the whole suite, run to the end: every pull request is compared with it, and a case
    missing from it would pass as `new` however badly it regressed."""
    if results.interrupted:
        return f"the run stopped early ({results.stop_reason or 'interrupted'})"
    if results.offline:  # config/offline.py: it says nothing of the model every later run is compared on
        return f"it was made with --offline ({results.offline})"
    ran = {CaseKey(s.agent, s.eval_set_id, c.eval_id) for s in results.eval_sets for c in s.cases}
    suite = {
        CaseKey(a.name, s.eval_set_id, c.eval_id)
        for a in plan.agents
        for s in a.eval_sets
        for c in s.file.eval_set.eval_cases
    }
    missing = sorted(suite - ran)
    if missing:
        agent, set_id, eval_id = missing[0]
        return (
            f"it covers {len(suite) - len(missing)} of the suite's {len(suite)} cases (missing "
            f"{agent}/{set_id}:{eval_id}): a --cases run or a subset of the shards is not a baseline"
        )
    return None


def _summed(a: Any, b: Any) -> Any:
    """Usage counts of two shards added up, field by field: numbers summed (an unknown cost stays unknown),
    lists united, mappings merged by key, nested counts summed the same way."""
    if a is None or b is None:
        return a if b is None else b if a is None else None
    if isinstance(a, BaseModel):
        return type(a).model_validate(
            {
                name: None
                if name.endswith("cost_usd") and None in (getattr(a, name), getattr(b, name))
                else _summed(getattr(a, name), getattr(b, name))
                for name in type(a).model_fields
            }
        )
    if isinstance(a, dict):
        return {
            key: _summed(a.get(key), b.get(key)) if key in a and key in b else a.get(key, b.get(key))
            for key in {**a, **b}
        }
    if isinstance(a, list):
        return sorted(set(a) | set(b))
    if isinstance(a, bool):
        return a or b
    if isinstance(a, int | float):
        return round(a + b, 6) if isinstance(a, float) or isinstance(b, float) else a + b
    return a


def only_cases_of(baseline: ResultsFile, current: ResultsFile) -> ResultsFile:
    """The baseline cut to the cases a `--cases` run chose: the rest were not run, not removed."""
    chosen = {CaseKey(s.agent, s.eval_set_id, c.eval_id) for s in current.eval_sets for c in s.cases}
    cut = baseline.model_copy(deep=True)
    for eval_set in cut.eval_sets:
        eval_set.cases = [c for c in eval_set.cases if (eval_set.agent, eval_set.eval_set_id, c.eval_id) in chosen]
        eval_set.summary = count(c.status for c in eval_set.cases)
    cut.eval_sets = [s for s in cut.eval_sets if s.cases]
    cut.summary = count(c.status for s in cut.eval_sets for c in s.cases)
    return cut
