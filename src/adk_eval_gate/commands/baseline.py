"""`baseline show|update`: show the stored baseline, or bless a results file as the new one."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from adk_eval_gate.commands.options import config_option

if TYPE_CHECKING:
    from adk_eval_gate.baseline.stores import BaselineStore
    from adk_eval_gate.config.loader import Workflow
    from adk_eval_gate.github.context import ActionsContext


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser(
        "baseline",
        parents=[config_option(text="the workflow YAML (its baseline section)")],
        help="show the stored baseline or bless a results file as the new one",
    )
    parser.add_argument("action", choices=["show", "update"])
    parser.add_argument("--results", help="with update: the results file to store")
    parser.add_argument(
        "--baseline",
        metavar="FILE",
        help="a local baseline file instead of the config's store (update writes it, with history.db beside it; "
        "show reads it); `ci --baseline FILE` and `compare --baseline FILE` compare with it",
    )
    parser.add_argument(
        "--allow-few-runs",
        action="store_true",
        help="with update: store results holding fewer runs a case than num_runs' max (by default refused: such a "
        "baseline turns a broken case into noise)",
    )
    parser.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    from adk_eval_gate.baseline.stores import build_store, describe_baseline
    from adk_eval_gate.commands.loading import load_config
    from adk_eval_gate.commands.local_baseline import with_baseline_file
    from adk_eval_gate.github.context import ActionsContext

    workflow = load_config(args.config)
    if args.baseline:
        workflow = with_baseline_file(workflow, args.baseline, must_exist=args.action == "show")
    context = ActionsContext.from_env()
    store = build_store(workflow, context)
    if args.action == "update":
        return _update(args, workflow, store, context)
    outcome = store.load()
    for warning in outcome.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    print(describe_baseline(outcome))
    return 0


def _update(args: argparse.Namespace, workflow: Workflow, store: BaselineStore, context: ActionsContext) -> int:
    """The baseline and, beside it, the history's new record, stored together or not at all; a history that
    cannot be read stops both."""
    from pathlib import Path

    from adk_eval_gate.baseline.history import load_history, next_history
    from adk_eval_gate.commands.loading import plan_of
    from adk_eval_gate.commands.local_baseline import few_runs, held_lines, refuse_few_runs, unwritable_store
    from adk_eval_gate.core.errors import InputError
    from adk_eval_gate.results.build import git_info, read_results
    from adk_eval_gate.run.agents_cli_plan import named_like_the_plan
    from adk_eval_gate.run.shards import why_not_a_baseline

    if not args.results:
        raise InputError(None, "--results", "is required for `baseline update`", "pass the results file to bless")
    if why := unwritable_store(workflow):
        # writing nothing and exiting 0 would leave the user believing a baseline exists
        fix = "pass --baseline FILE to write a local baseline file, or set baseline: {store: file, path: ...}"
        raise InputError(workflow.path, "baseline.store", why, fix)
    plan = plan_of(workflow)
    results = named_like_the_plan(read_results(Path(args.results)), plan)  # agents-cli's own results too
    if why := why_not_a_baseline(results, plan):
        raise InputError(
            args.results,
            None,
            f"is not a baseline: {why}",
            "bless the results of a full run (`merge` every shard first)",
        )
    if not args.allow_few_runs:
        refuse_few_runs(results, plan, args.results)
    history = load_history(workflow, context, store=store)
    if history is not None and history.failure is not None:
        raise InputError(history.failure.source, None, history.failure.problem, history.failure.fix)
    # a results file that names no commit (agents-cli's `eval grade` writes none) is recorded at the one checked out:
    # recorded as "unknown", every update would replace the last and the history would never grow
    commit = results.git.sha or git_info(workflow.path.parent).sha
    step = next_history(history, results, whole_suite=True, sha=commit)
    # Both or neither: a full disk or a refused write changes nothing (stores/file.py, stores/branch.py).
    print(f"baseline updated: {store.save(results, step.pending)}")
    print("it holds:")
    print("\n".join(held_lines(results, plan)))
    for where, fewest, wanted in few_runs(results, plan):  # --allow-few-runs: said, not hidden
        print(f"warning: {where} holds {fewest} run(s) a case, fewer than num_runs' max {wanted}", file=sys.stderr)
    if step.note:
        print(step.note)
    return 0
