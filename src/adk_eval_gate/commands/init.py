"""`init`: write eval-gate.yml and a GitHub workflow for the ADK agents and eval files found here."""

from __future__ import annotations

import argparse


def add_parser(commands: argparse._SubParsersAction) -> None:
    parser = commands.add_parser(
        "init", help="write eval-gate.yml and a GitHub workflow for this repository's ADK agents"
    )
    parser.add_argument("--dir", default=".", help="the repository root (default: here)")
    parser.add_argument("--branch", help="the default branch the workflow stores baselines from (default: git's)")
    parser.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    from pathlib import Path

    from adk_eval_gate.commands.gitignore import add_ignores
    from adk_eval_gate.commands.scaffold import init, next_steps

    result = init(Path(args.dir), branch=args.branch)
    print(result.summary())
    if ignored := add_ignores(Path(args.dir)):  # a local run must leave `git status` clean
        print(f"added to .gitignore: {' '.join(ignored)}")
    print(next_steps(result.branch))
    return 0
