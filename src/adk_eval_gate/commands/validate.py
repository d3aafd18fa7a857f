"""`validate`: check the config, every eval set and its criteria; exit 0 with what will run, or 2."""

from __future__ import annotations

import argparse

from adk_eval_gate.commands.options import config_option


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser(
        "validate",
        parents=[config_option()],
        help="check the config, every eval set and its criteria (exit 0 or 2)",
    )
    parser.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    from adk_eval_gate.baseline.stores import describe_store
    from adk_eval_gate.commands.loading import load_plan
    from adk_eval_gate.run.preflight import check_targets, plan_lines, power_lines

    plan = load_plan(args.config)
    needs = check_targets(plan)
    for line in plan_lines(plan):
        print(line)
    for line in needs:
        print(line)
    for line in power_lines(plan):
        print(line)
    print(describe_store(plan.workflow))
    print(f"{args.config}: OK")
    return 0
