"""Every `adk-eval-gate …` command line shown in the README, docs/ and the examples' READMEs parses with the CLI
as it is: a renamed option or a removed subcommand cannot leave a stale command in the docs."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from adk_eval_gate.commands.parser import build_parser
from tests.conftest import ROOT

PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), *sorted((ROOT / "examples").glob("*/README.md"))]
FENCE = re.compile(r"^```[^\n]*\n(.*?)^```", re.M | re.S)
# An inline `adk-eval-gate …` span with no placeholder ([--x], FILE, …) is a command a reader may paste too.
INLINE = re.compile(r"`(adk-eval-gate [^`]+)`")
PLACEHOLDER = re.compile(r"[\[\]<>…|]|\.\.\.|\b[A-Z]{3,}\b")  # a synopsis, not a command to paste


def _commands(text: str) -> list[str]:
    found = []
    for block in FENCE.findall(text):
        for line in block.splitlines():
            line = line.split(" #", 1)[0].strip().removeprefix("$ ").removeprefix("- run: ").strip()
            # `VAR=value adk-eval-gate …`, `cd x && adk-eval-gate …`: the command itself
            for part in re.split(r"&&|\|\||;|\|", line):
                words = part.strip().split()
                while words and re.fullmatch(r"[A-Z_][A-Z0-9_]*=\S*", words[0]):
                    words = words[1:]
                if words[:1] == ["adk-eval-gate"] and not PLACEHOLDER.search(" ".join(words).replace("|", "")):
                    found.append(" ".join(words))
    for span in INLINE.findall(text):
        if not PLACEHOLDER.search(span):
            found.append(span)
    return found


CASES = [(page, command) for page in PAGES for command in _commands(page.read_text(encoding="utf-8"))]


def test_the_docs_show_commands() -> None:
    assert len(CASES) > 20, "the extraction found too few commands: the pattern is broken"


@pytest.mark.parametrize(("page", "command"), CASES, ids=[f"{p.name}:{c[:60]}" for p, c in CASES])
def test_a_documented_command_parses(page: Path, command: str) -> None:
    words = shlex.split(command)[1:]
    if words in (["--help"], ["--version"]) or "--help" in words:
        return
    try:
        build_parser().parse_args(words)
    except SystemExit as exc:
        pytest.fail(f"{page.relative_to(ROOT)}: `{command}` does not parse (exit {exc.code})")
