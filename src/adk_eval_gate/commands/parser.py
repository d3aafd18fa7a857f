"""The argument parser: shared parent options, one module per subcommand (each adds its own parser).

Handlers import their stage machinery when they run, so `--help` and a refused argument stay instant.
"""

from __future__ import annotations

import argparse
from typing import NoReturn

from adk_eval_gate.commands import baseline, ci, compare, history, init, merge, publish, run, schema, validate
from adk_eval_gate.core.errors import EXIT_BAD_INPUT
from adk_eval_gate.core.version import __version__

# In the order `--help` lists them.
SUBCOMMANDS = (validate, run, ci, merge, publish, compare, baseline, history, init, schema)


class Parser(argparse.ArgumentParser):
    """Usage errors are one line, like every other bad input, with the way to the full usage."""

    def error(self, message: str) -> NoReturn:
        first = " ".join(message.split())
        self.exit(EXIT_BAD_INPUT, f"error: {self.prog}: {first}; see `{self.prog} --help`\n")


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(prog="adk-eval-gate", description="Gate pull requests on ADK agent evaluations.")
    parser.add_argument("--version", action="version", version=f"adk-eval-gate {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for command in SUBCOMMANDS:
        command.add_parser(commands)
    return parser
