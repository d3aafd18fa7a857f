"""Command-line usage mistakes named in the user's own words, for the one-line usage error.

argparse checks required options before it looks at unknown ones, so `validate --confg x` was told "--config is
required": the misspelt option must be found first, and named with the option it most likely meant.
"""

from __future__ import annotations

import argparse
import re

from adk_eval_gate.core.errors import did_you_mean


def unknown_option(parser: argparse.ArgumentParser, tokens: list[str]) -> str | None:
    """`unknown option --confg; did you mean --config?` for the first option `parser` does not know, else None."""
    known = [option for action in parser._actions for option in action.option_strings]
    has_commands = any(isinstance(action, argparse._SubParsersAction) for action in parser._actions)
    for token in tokens:
        if token == "--":
            return None
        if not token.startswith("-") or token == "-" or " " in token or parser._negative_number_matcher.match(token):
            if has_commands:  # what follows the command is the command's own parser's to judge
                return None
            continue
        option = token.split("=", 1)[0]
        if option in known or (option.startswith("--") and any(k.startswith(option) for k in known)):
            continue  # argparse takes unique prefixes (and says when one is ambiguous)
        guess = did_you_mean(option, [k for k in known if k.startswith("--")])
        return f"unknown option {option}" + (f"; did you mean {guess}?" if guess else "")
    return None


def with_choice_hint(message: str) -> str:
    """argparse's "invalid choice: 'valdate' (choose from ...)" with the choice it most likely meant."""
    choice = re.search(r"invalid choice: '([^']*)' \(choose from (.*)\)", message)
    if choice and (guess := did_you_mean(choice.group(1), [c.strip().strip("'") for c in choice.group(2).split(",")])):
        return f"{message}; did you mean {guess}?"
    return message
