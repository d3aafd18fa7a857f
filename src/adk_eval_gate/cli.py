"""Command line: `validate`, `run`, `schema`. Exit codes: 0 pass, 1 cases failed, 2 bad input."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from . import __version__
from .errors import EXIT_BAD_INPUT, InputError


def _validate(args: argparse.Namespace) -> int:
    import asyncio

    from .plan import build_plan
    from .targets import build_target

    plan = build_plan(args.config)

    async def check_targets() -> None:  # each target checks its own inputs: actuals parse, the agent imports
        for agent in plan.agents:
            target = build_target(agent.agent, plan.workflow.base_dir)
            try:
                await target.start()
            finally:
                await target.aclose()

    asyncio.run(check_targets())
    for agent in plan.agents:
        cases = sum(len(s.file.eval_set.eval_cases) for s in agent.eval_sets)
        print(f"{agent.name}: {len(agent.eval_sets)} eval set(s), {cases} case(s), target {agent.agent.settings.target.kind}")
        for eval_set in agent.eval_sets:
            names = ", ".join(c.name for c in eval_set.criteria)
            print(f"  {plan.relative(eval_set.file.path)} [{eval_set.eval_set_id}]: "
                  f"{len(eval_set.file.eval_set.eval_cases)} case(s); criteria ({eval_set.criteria_source}): {names}")
            for criterion in eval_set.criteria:
                if criterion.spec.unavailable_reason:
                    print(f"    note: {criterion.name} will be reported as not evaluated: {criterion.spec.unavailable_reason}")
    print(f"{args.config}: OK")
    return 0


def _run(args: argparse.Namespace) -> int:
    from .gate import exit_code_for
    from .pipeline import run_plan
    from .plan import build_plan
    from .report.console import render_table
    from .results.build import write_results

    plan = build_plan(args.config)
    results = run_plan(plan, quiet=args.quiet)
    write_results(results, Path(args.output))
    if results.interrupted:
        print(f"stopped early ({results.stop_reason}); finished cases were scored and written", file=sys.stderr)
    if not args.quiet:
        print(render_table(results))
    print(f"results written to {args.output}")
    return exit_code_for(results)


def _schema(args: argparse.Namespace) -> int:
    from .results.build import results_json_schema_text

    sys.stdout.write(results_json_schema_text())
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="adk-eval-gate", description="Gate pull requests on ADK agent evaluations.")
    parser.add_argument("--version", action="version", version=f"adk-eval-gate {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    validate = commands.add_parser("validate", help="check the config, every eval set and its criteria (exit 0 or 2)")
    validate.add_argument("--config", required=True, help="the workflow YAML file")
    validate.set_defaults(handler=_validate)

    run = commands.add_parser("run", help="run the agents, score every case, write the results file")
    run.add_argument("--config", required=True, help="the workflow YAML file")
    run.add_argument("--output", default="adk-eval-results.json", help="where to write the results JSON")
    run.add_argument("--quiet", action="store_true", help="print neither progress lines nor the per-case table")
    run.set_defaults(handler=_run)

    schema = commands.add_parser("schema", help="print the JSON Schema of a file format")
    schema.add_argument("kind", choices=["results"])
    schema.set_defaults(handler=_schema)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return args.handler(args)
    except InputError as exc:
        print(f"error: {exc.render()}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    raise SystemExit(main())
