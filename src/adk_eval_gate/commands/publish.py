"""`publish`: post a fork pull request's report from its artifact, judged by the base branch's config."""

from __future__ import annotations

import argparse


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser("publish", help="post a fork pull request's report from its artifact (workflow_run)")
    parser.add_argument(
        "--dir", required=True, help="the downloaded adk-eval-gate-out artifact (only its results are used)"
    )
    parser.add_argument(
        "--config",
        required=True,
        help="the base branch's workflow YAML (checked out by the trusted workflow): its gate policy and baseline "
        "store judge the fork's results",
    )
    parser.add_argument(
        "--comment-key", help="the sticky comment's key (default: the config's path in the repository, as `ci`)"
    )
    parser.add_argument(
        "--output-dir",
        default="adk-eval-gate-published",
        help="where the trusted comparison and report go",
    )
    parser.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    from adk_eval_gate.github.context import ActionsContext
    from adk_eval_gate.publish.fork import run_publish

    context = ActionsContext.from_env()
    return run_publish(args.dir, args.config, args.comment_key, context=context, output_dir=args.output_dir)
