"""`goldens update|import`: keep eval cases' expectations in step with intended changes (docs/goldens.md).

* `update` rewrites the expected turns of chosen cases from a results file's runs (where the runs agree), in the
  eval file's own format and layout. A dry run by default: the unified diff is printed; `--write` applies it.
* `import` adds a real conversation (an ADK session, an agents-cli trace, a case of a results file) to an eval
  set as a new case whose expected turns are the ones it took.
"""

from __future__ import annotations

import argparse
import sys

from adk_eval_gate.commands.help import OUTPUT_DIR
from adk_eval_gate.commands.options import config_option


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser(
        "goldens",
        parents=[config_option(required=False, text="the workflow YAML (eval set paths resolve against its folder)")],
        help="update eval cases' expected turns from runs, or import a real conversation as a case",
    )
    parser.add_argument("action", choices=["update", "import"])
    parser.add_argument(
        "--results", metavar="FILE", default=f"{OUTPUT_DIR}/results.json", help="update: the runs to take turns from"
    )
    parser.add_argument("--eval-set", action="append", metavar="ID", help="update: an eval set (repeatable)")
    parser.add_argument(
        "--case",
        "--cases",
        action="append",
        metavar="[SET:]CASE",
        help="update: a case, globs allowed (repeatable)",
    )
    parser.add_argument(
        "--criterion", action="append", metavar="NAME", help="update: cases this criterion did not pass"
    )
    parser.add_argument("--regressed", metavar="COMPARISON", help="update: every case this comparison.json regressed")
    parser.add_argument("--all", action="store_true", help="update: every case of the results file")
    parser.add_argument("--unanimous", action="store_true", help="update: every run must agree, not a majority")
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--write", action="store_true", help="apply the change (without it: print the diff only)")
    mode.add_argument("--dry-run", action="store_true", help="print the diff and change nothing (the default)")
    parser.add_argument(
        "--from", "--source", dest="source", metavar="FILE", help="import: a session JSON, trace or results file"
    )
    parser.add_argument("--into", metavar="EVALSET", help="import: the eval set file to add the case to")
    parser.add_argument("--id", dest="new_id", metavar="EVAL_ID", help="import: the new case's id (default: derived)")
    parser.add_argument("--source-case", metavar="[SET:]CASE", help="import from a results file: which case")
    parser.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    if args.action == "import":
        from adk_eval_gate.commands.goldens_import import import_case

        code: int = import_case(args)
        return code
    return _update(args)


def _update(args: argparse.Namespace) -> int:
    from pathlib import Path

    from adk_eval_gate.commands.goldens_update import Selection, plan_update, regressed_cases, summary_lines
    from adk_eval_gate.core.errors import InputError
    from adk_eval_gate.core.files import existing_input, replace_together
    from adk_eval_gate.results.build import read_results

    selection = Selection(
        eval_sets=tuple(args.eval_set or ()),
        cases=tuple(args.case or ()),
        criteria=tuple(args.criterion or ()),
        regressed=regressed_cases(existing_input(args.regressed, "--regressed")) if args.regressed else None,
    )
    if selection.empty() and not args.all:
        raise InputError(
            None,
            "goldens update",
            "names no case to update",
            "choose with --eval-set, --case, --criterion or --regressed comparison.json (or --all)",
        )
    results_path = existing_input(args.results, "--results")
    results = read_results(results_path)
    base = Path(args.config).parent if args.config else Path.cwd()
    plan = plan_update(results, base, selection, unanimous=args.unanimous)
    if not (plan.updated or plan.unchanged or plan.listed):
        raise InputError(results_path, None, "has no case the selection chooses", "check the ids (see `view`)")
    for change in plan.changes:
        sys.stdout.write(change.diff())
    if args.write and plan.changes:
        replace_together([(change.path, change.content()) for change in plan.changes])
    for line in summary_lines(plan, wrote=args.write):
        print(line, file=sys.stderr)
    if plan.changes and not args.write:
        print("dry run: nothing written; add --write to apply", file=sys.stderr)
    return 1 if plan.listed else 0
