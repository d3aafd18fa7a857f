"""`history show`: the default branch's history as the next pull request will see it — trends, the drift gate's
reference, known flaky cases, each eval set's pass^k, where a decline since the reference began, and the newest
records; `--json` prints the history as JSON
(schema_version 1, `adk-eval-gate schema history`)."""

from __future__ import annotations

import argparse
import sys

from adk_eval_gate.commands.options import config_option


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser(
        "history",
        parents=[config_option(text="the workflow YAML (its baseline store keeps the history)")],
        help="show the default branch's history: trends, the drift reference, flaky cases",
    )
    parser.add_argument("action", choices=["show"])
    parser.add_argument("--json", action="store_true", help="print the whole history as JSON instead")
    parser.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    from adk_eval_gate.baseline.history import HistoryError, history_summary, load_history, write_json
    from adk_eval_gate.baseline.history.io import START_OVER
    from adk_eval_gate.commands.loading import load_config
    from adk_eval_gate.core.errors import InputError
    from adk_eval_gate.github.context import ActionsContext
    from adk_eval_gate.report.history import history_lines, record_lines
    from adk_eval_gate.report.history_reliability import pass_k_lines, slide_lines

    workflow = load_config(args.config)
    state = load_history(workflow, ActionsContext.from_env(), every_summary=False)  # reads the summaries it shows
    if state is None:
        print("no history: the config keeps none (history.enabled: false, or baseline.store: none)")
        return 0
    if state.failure is not None:
        raise InputError(state.failure.source, None, state.failure.problem, state.failure.fix)
    if state.history is None:
        print("\n".join(state.notes))
        return 0
    try:
        if args.json:
            write_json(
                state.history, sys.stdout.write, state.source
            )  # a record at a time: a long history never sits in memory
            return 0
        report = history_summary(state, workflow.settings.gate)
        shown = state.history.records[-state.settings.trend :]
        newest = record_lines(shown)
        total = len(state.history.records)
        full = state.history.full(range(total - len(shown), total))  # the shown records with their cases
        pass_k = workflow.settings.gate.pass_k
        reliability = pass_k_lines([full[i] for i in sorted(full)], pass_k.k if pass_k else None)
        reliability += slide_lines(report, state.history.records)
    except HistoryError as exc:
        raise InputError(exc.source, None, exc.problem, exc.fix) from None
    except ValueError as exc:  # a summary read only now (they are read as shown) that is not one of ours
        raise InputError(state.source, None, str(exc), START_OVER) from None
    lines = history_lines(report)
    lines += reliability
    lines += [f"  Newest {len(shown)} record(s), newest first:", *newest]
    print("\n".join(lines))
    return 0
