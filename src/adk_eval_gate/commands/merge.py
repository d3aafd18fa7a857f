"""`merge`: combine the shards' results, then compare, report, comment and gate once, as `ci` does."""

from __future__ import annotations

import argparse

from adk_eval_gate.commands.options import config_option, publishing_options


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser(
        "merge",
        parents=[config_option(text="the workflow YAML file the shards ran"), publishing_options()],
        help="combine shard results, then compare, report, comment and gate once",
    )
    parser.add_argument("results", nargs="+", help="every shard's results.json")
    parser.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    from pathlib import Path

    from adk_eval_gate.commands.loading import load_plan
    from adk_eval_gate.commands.options import publish_options
    from adk_eval_gate.github.context import ActionsContext
    from adk_eval_gate.publish.finish import finish
    from adk_eval_gate.results.build import read_results
    from adk_eval_gate.run.shards import merge_results

    plan = load_plan(args.config)
    merged = merge_results([(path, read_results(Path(path))) for path in args.results], plan)
    return finish(publish_options(args), plan, merged, ActionsContext.from_env())
