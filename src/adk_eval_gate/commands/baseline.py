"""`baseline show|update`: show the stored baseline, or bless a results file as the new one."""

from __future__ import annotations

import argparse
import sys

from adk_eval_gate.commands.options import config_option


def add_parser(commands: argparse._SubParsersAction) -> None:
    parser = commands.add_parser(
        "baseline",
        parents=[config_option(text="the workflow YAML (its baseline section)")],
        help="show the stored baseline or bless a results file as the new one",
    )
    parser.add_argument("action", choices=["show", "update"])
    parser.add_argument("--results", help="with update: the results file to store")
    parser.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    from adk_eval_gate.baseline.stores import build_store, describe_baseline
    from adk_eval_gate.commands.loading import load_config
    from adk_eval_gate.github.context import ActionsContext

    workflow = load_config(args.config)
    context = ActionsContext.from_env()
    store = build_store(workflow, context)
    if args.action == "update":
        return _update(args, workflow, store, context)
    outcome = store.load()
    for warning in outcome.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    print(describe_baseline(outcome))
    return 0


def _update(args: argparse.Namespace, workflow, store, context) -> int:
    """The baseline and, beside it, the history's new record, stored together or not at all; a history that
    cannot be read stops both."""
    from pathlib import Path

    from adk_eval_gate.baseline.history import load_history, next_history
    from adk_eval_gate.commands.loading import plan_of
    from adk_eval_gate.core.errors import InputError
    from adk_eval_gate.results.build import read_results
    from adk_eval_gate.run.agents_cli_plan import named_like_the_plan
    from adk_eval_gate.run.shards import why_not_a_baseline

    if not args.results:
        raise InputError(None, "--results", "is required for `baseline update`", "pass the results file to bless")
    plan = plan_of(workflow)
    results = named_like_the_plan(read_results(Path(args.results)), plan)  # agents-cli's own results too
    if why := why_not_a_baseline(results, plan):
        raise InputError(
            args.results,
            None,
            f"is not a baseline: {why}",
            "bless the results of a full run (`merge` every shard first)",
        )
    history = load_history(workflow, context, store=store)
    if history is not None and history.failure is not None:
        raise InputError(history.failure.source, None, history.failure.problem, history.failure.fix)
    step = next_history(history, results, whole_suite=True)
    # Both or neither: a full disk or a refused write changes nothing (stores/file.py, stores/branch.py).
    print(f"baseline updated: {store.save(results, step.pending)}")
    if step.note:
        print(step.note)
    return 0
