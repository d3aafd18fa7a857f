"""`compare`: compare a results file with a baseline and apply the gate (exit 0 pass, 1 fail)."""

from __future__ import annotations

import argparse

from adk_eval_gate.commands.options import config_option


def add_parser(commands: argparse._SubParsersAction) -> None:
    parser = commands.add_parser(
        "compare",
        parents=[config_option(required=False, text="the workflow YAML (gate policy and baseline store)")],
        help="compare results with a baseline and apply the gate (exit 0 pass, 1 fail)",
    )
    parser.add_argument("--results", required=True, help="the current results file")
    parser.add_argument("--baseline", help="a baseline results file (default: the config's baseline store)")
    parser.add_argument("--output", default="comparison.json", help="where to write the comparison JSON")
    parser.add_argument("--label", action="append", help="a pull request label (repeatable; e.g. the override label)")
    parser.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    from pathlib import Path

    from adk_eval_gate.baseline.history import load_history
    from adk_eval_gate.baseline.stores import load_baseline
    from adk_eval_gate.commands.loading import load_config
    from adk_eval_gate.config.models import GateSettings
    from adk_eval_gate.core.files import existing_input, write_text_atomic
    from adk_eval_gate.gate.decision import build_comparison
    from adk_eval_gate.gate.exit_codes import exit_code_for_decision
    from adk_eval_gate.github.context import ActionsContext
    from adk_eval_gate.github.labels import current_labels
    from adk_eval_gate.github.workflow_commands import warn
    from adk_eval_gate.report.console import render_comparison
    from adk_eval_gate.results.build import read_results

    # A path the user typed: a typo must not turn into "no baseline", which passes.
    results_path = existing_input(args.results, "--results")
    baseline_path = existing_input(args.baseline, "--baseline") if args.baseline else None
    current = read_results(results_path)
    workflow = load_config(args.config) if args.config else None
    context = ActionsContext.from_env()
    outcome = load_baseline(workflow, context, baseline_path)
    gate = workflow.settings.gate if workflow else GateSettings()
    max_age = getattr(workflow.settings.baseline, "max_age_days", None) if workflow else None
    # a pull request's labels count only as GitHub's API confirms them now, never as a (re-run's) payload lists them
    labels, unconfirmed = current_labels(context) if context.pull_request is not None else ([], None)
    if unconfirmed:
        warn(unconfirmed)
    labels = [*labels, *(args.label or [])]
    history = load_history(workflow, context, outcome) if workflow else None
    comparison = build_comparison(current, outcome, gate, labels, max_age_days=max_age, history=history)
    if args.output:
        write_text_atomic(Path(args.output), comparison.model_dump_json(indent=2) + "\n")
    print(render_comparison(comparison))
    return exit_code_for_decision(comparison.verdict)
