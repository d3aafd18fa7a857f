"""`--help` for people: the subcommands in three groups (start here, everyday, CI plumbing), an example for each
and every option's default — kept here in one table so a new subcommand cannot be added without a place in it
(tests/unit/commands/test_help.py checks that every subcommand is in exactly one group with an example)."""

from __future__ import annotations

import argparse
import textwrap

OUTPUT_DIR = "adk-eval-gate-out"  # `ci`, `run`, `compare` and `view` all default to this one folder


class OutputDefault(str):
    """An output path the user did not give: placed beside the config (config_file.place_outputs), not in the
    working directory, so a command run from a subfolder writes where one run from the config's folder does."""


GROUPS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("Start here", ("init", "validate", "ci")),
    ("Everyday", ("run", "compare", "view", "history", "baseline", "goldens")),
    ("CI plumbing (the Action and workflows call these)", ("status", "merge", "publish", "schema")),
)

EXAMPLES: dict[str, tuple[str, ...]] = {
    "init": ("adk-eval-gate init", "adk-eval-gate init --dir path/to/repo --branch main"),
    "validate": ("adk-eval-gate validate", "adk-eval-gate validate --config examples/hello_world/eval-gate.yml"),
    "ci": (
        "adk-eval-gate ci",
        "adk-eval-gate ci --no-comment --output-dir /tmp/gate",
        "adk-eval-gate ci --baseline baseline.json",
    ),
    "run": ("adk-eval-gate run", "adk-eval-gate run --cases dice:roll_6 --print-detailed-results"),
    "compare": ("adk-eval-gate compare", "adk-eval-gate compare --results new.json --baseline old.json"),
    "view": ("adk-eval-gate view", "adk-eval-gate view path/to/downloaded-artifact --no-open"),
    "history": ("adk-eval-gate history show", "adk-eval-gate history show --json"),
    "baseline": (
        "adk-eval-gate baseline show",
        f"adk-eval-gate baseline update --results {OUTPUT_DIR}/results.json",
        f"adk-eval-gate baseline update --results {OUTPUT_DIR}/results.json --baseline baseline.json",
    ),
    "goldens": (
        "adk-eval-gate goldens update --case dice:roll_6",
        f"adk-eval-gate goldens update --regressed {OUTPUT_DIR}/comparison.json --write",
    ),
    "status": ("adk-eval-gate status --state cancelled",),
    "merge": ("adk-eval-gate merge shard-1/results.json shard-2/results.json",),
    "publish": ("adk-eval-gate publish --dir artifact --config base/eval-gate.yml",),
    "schema": ("adk-eval-gate schema results",),
}


class CommandHelp(argparse.RawDescriptionHelpFormatter):
    """The examples keep their lines; every option that has a default says it (argparse's own
    ArgumentDefaultsHelpFormatter would also print "(default: None)" and "(default: False)" for flags)."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        text = action.help or ""
        if (
            "%(default)" in text
            or "(default" in text  # the help already names its default in words
            or action.default in (None, False, argparse.SUPPRESS)
            or not action.option_strings
        ):
            return text
        return f"{text} (default: %(default)s)"

    def _split_lines(self, text: str, width: int) -> list[str]:
        # a path like adk-eval-gate-out/results.json stays whole, to be copied as it is
        return textwrap.wrap(" ".join(text.split()), width, break_on_hyphens=False) or [""]


def decorate(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Examples and defaults on every subcommand's own `--help`."""
    for name, parser in subparsers.choices.items():
        parser.formatter_class = CommandHelp
        lines = "\n".join(f"  {example}" for example in EXAMPLES.get(name, ()))
        parser.epilog = f"examples:\n{lines}" if lines else None


def overview(prog: str, subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> str:
    """The top-level `--help`: what the tool is, then the subcommands by group."""
    helps = {action.dest: action.help or "" for action in subparsers._choices_actions}
    width = max(len(name) for name in subparsers.choices) + 2
    lines = [
        f"usage: {prog} COMMAND [options]   ({prog} COMMAND --help for a command's options and examples)",
        "",
        "Gate pull requests on ADK agent evaluations: run your eval sets, score them as ADK does, compare with",
        "the default branch's baseline, comment on the pull request and fail the check on a regression.",
        f"--config defaults to the nearest eval-gate.yml; outputs go to {OUTPUT_DIR}/.",
    ]
    for title, names in GROUPS:
        lines += ["", f"{title}:"]
        lines += [f"  {name:<{width}}{helps.get(name, '')}" for name in names]
    lines += ["", "options:", "  -h, --help  show this help and exit", "  --version   print the version and exit", ""]
    return "\n".join(lines)
