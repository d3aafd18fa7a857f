"""The argument parser: shared parent options, one module per subcommand (each adds its own parser).

Handlers import their stage machinery when they run, so `--help` and a refused argument stay instant.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import NoReturn, cast

from adk_eval_gate.commands import (
    baseline,
    ci,
    compare,
    goldens,
    history,
    init,
    merge,
    publish,
    run,
    schema,
    status,
    validate,
    view,
)
from adk_eval_gate.commands.help import decorate, overview
from adk_eval_gate.commands.usage import unknown_option, with_choice_hint
from adk_eval_gate.core.errors import EXIT_BAD_INPUT
from adk_eval_gate.core.version import __version__

# Registration order; `--help` lists them by group (help.py).
SUBCOMMANDS = (validate, run, ci, status, merge, publish, compare, baseline, history, init, schema, view, goldens)


class Parser(argparse.ArgumentParser):
    """Usage errors are one line, like every other bad input, with the way to the full usage; a misspelt option is
    named before argparse's complaint about the option it hides (see usage.py)."""

    def parse_known_args(  # type: ignore[override]  # typeshed overloads on namespace; one signature suffices here
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> tuple[argparse.Namespace, list[str]]:
        tokens = list(sys.argv[1:] if args is None else args)
        if problem := unknown_option(self, tokens):
            self.error(problem)
        return super().parse_known_args(tokens, namespace)

    def error(self, message: str) -> NoReturn:
        first = with_choice_hint(" ".join(message.split()))
        joint = " " if first.endswith("?") else "; "
        self.exit(EXIT_BAD_INPUT, f"error: {self.prog}: {first}{joint}see `{self.prog} --help`\n")


class TopLevelParser(Parser):
    """The top-level `--help` groups the subcommands (start here / everyday / CI plumbing) instead of argparse's
    one alphabet-free list."""

    subcommands: argparse._SubParsersAction[argparse.ArgumentParser] | None = None

    def format_help(self) -> str:
        if self.subcommands is None:
            return super().format_help()
        return overview(self.prog, self.subcommands)


def build_parser() -> argparse.ArgumentParser:
    parser = TopLevelParser(prog="adk-eval-gate", description="Gate pull requests on ADK agent evaluations.")
    parser.add_argument("--version", action="version", version=f"adk-eval-gate {__version__}")
    # Typed as building plain parsers: each subcommand only reads ArgumentParser's API (they are TopLevelParsers).
    commands = cast(
        "argparse._SubParsersAction[argparse.ArgumentParser]",
        parser.add_subparsers(dest="command", required=True, metavar="COMMAND"),
    )
    for command in SUBCOMMANDS:
        command.add_parser(commands)
    decorate(commands)
    parser.subcommands = commands
    return parser
