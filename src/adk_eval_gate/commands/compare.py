"""`compare`: compare a results file with a baseline and apply the gate (exit 0 pass, 1 fail)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path

from adk_eval_gate.commands.help import OUTPUT_DIR, OutputDefault
from adk_eval_gate.commands.options import config_option


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser(
        "compare",
        parents=[config_option(required=False, text="the workflow YAML (gate policy and baseline store)")],
        help="compare results with a baseline and apply the gate (exit 0 pass, 1 fail)",
    )
    parser.add_argument(
        "--results",
        metavar="FILE",
        default=OutputDefault(f"{OUTPUT_DIR}/results.json"),
        help=f"the current results file (default: {OUTPUT_DIR}/ beside the config)",
    )
    parser.add_argument("--baseline", help="a baseline results file (default: the config's baseline store)")
    parser.add_argument(
        "--output",
        metavar="FILE",
        default=OutputDefault(f"{OUTPUT_DIR}/comparison.json"),
        help="where to write the comparison JSON (beside the results, where `view` looks)",
    )
    parser.add_argument("--label", action="append", help="a pull request label (repeatable; e.g. the override label)")
    parser.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    from adk_eval_gate.core.collector import bulk_data

    with bulk_data() as loaded:
        return _compare(args, loaded)


def _compare(args: argparse.Namespace, loaded: Callable[[], None]) -> int:
    from adk_eval_gate.baseline.history import load_history
    from adk_eval_gate.baseline.provenance_changes import scoring_changed
    from adk_eval_gate.baseline.stores import load_baseline
    from adk_eval_gate.commands.loading import load_config, plan_of
    from adk_eval_gate.config.workflow_settings import GateSettings, max_age_days
    from adk_eval_gate.core.files import existing_input, write_text_atomic
    from adk_eval_gate.gate.comparison_file import build_comparison
    from adk_eval_gate.gate.exit_codes import exit_code_for_decision
    from adk_eval_gate.github.context import ActionsContext
    from adk_eval_gate.github.labels import current_labels
    from adk_eval_gate.github.workflow_commands import warn
    from adk_eval_gate.report.console import render_comparison
    from adk_eval_gate.report.run_marks import remove_stale
    from adk_eval_gate.results.build import read_results
    from adk_eval_gate.results.offline import refuse_mixed
    from adk_eval_gate.run.agents_cli_plan import named_like_the_plan
    from adk_eval_gate.run.rescore_baseline import rescore_outcome

    results_path = _results_path(args)
    baseline_path = existing_input(args.baseline, "--baseline") if args.baseline else None
    current = read_results(results_path)
    workflow = load_config(args.config) if args.config else None
    if workflow is not None and any(s.target == "agents-cli" for s in current.eval_sets):
        current = named_like_the_plan(current, plan_of(workflow))  # agents-cli's results, named as the config does
    context = ActionsContext.from_env()
    outcome = load_baseline(workflow, context, baseline_path)
    if outcome.baseline is not None:
        refuse_mixed(current, results_path, outcome.baseline.results, outcome.baseline.identity.source)
    if workflow is not None and outcome.baseline and scoring_changed(outcome.baseline.results, current):
        outcome = rescore_outcome(plan_of(workflow), outcome, current)  # scored again, if it kept its invocations
    gate = workflow.settings.gate if workflow else GateSettings()
    max_age = max_age_days(workflow.settings.baseline) if workflow else None
    # a pull request's labels count only as GitHub's API confirms them now, never as a (re-run's) payload lists them
    labels, unconfirmed = current_labels(context) if context.pull_request is not None else ([], None)
    if unconfirmed:
        warn(unconfirmed)
    labels = [*labels, *(args.label or [])]
    history = load_history(workflow, context, outcome) if workflow else None
    loaded()  # the run, its baseline and history live until the end: out of the collector's sight from here
    comparison = build_comparison(current, outcome, gate, labels, max_age_days=max_age, history=history)
    if args.output:
        comparison = comparison.model_copy(update={"run_id": current.run_id})
        write_text_atomic(Path(args.output), comparison.model_dump_json(indent=2) + "\n")
        # Reports beside it tell another comparison's story (a `ci`'s, or another baseline's): they go, and `view`
        # renders the page from this one.
        stale = remove_stale(Path(args.output).parent, None, ("report.md", "report.html", "junit.xml"))
        if stale:
            print(f"removed {', '.join(stale)} beside {args.output}: written from another comparison", file=sys.stderr)
    print(render_comparison(comparison))
    return exit_code_for_decision(comparison.verdict)


def _results_path(args: argparse.Namespace) -> Path:
    """The results to compare. A path the user typed: a typo must not turn into "no baseline", which passes."""
    from adk_eval_gate.core.errors import InputError
    from adk_eval_gate.core.files import existing_input

    if isinstance(args.results, OutputDefault) and not Path(args.results).exists():
        raise InputError(
            None,
            "--results",
            f"no results at {args.results} (the default, where `adk-eval-gate run` writes them)",
            "run `adk-eval-gate run` first, or pass --results FILE",
        )
    return existing_input(args.results, "--results")
