"""`/eval` comment commands, parsed strictly: whatever anyone writes in a comment is either one command we run or
one `CommandError` whose message says what was wrong. A parser that guessed would run code nobody asked for.

    /eval [SHA] [runs=N] [cases=SET:CASE,…]…   evaluate the pull request's head (SHA: the commit you reviewed)
    /eval accept [SHA] REASON                    accept the current regressions for that commit only
    /eval update-goldens SHA [cases=SET:CASE,…]  update that commit's goldens from its runs, pushed as one commit
    /eval help                                   the usage, as a reply

Only the comment's first line is read (the rest is for people). SHA is read as any word of 7 to 64 hex digits, so
that a short one can be refused by name (`handshake/who_asked.py` runs only the full sha: a prefix is a name the
pull request's author can collide); in `accept` the first word after `accept` is the commit when it looks like one,
and the reason is the rest of the line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

USAGE = (
    "`/eval [full-sha] [runs=N] [cases=SET:CASE,…]`, `/eval accept [full-sha] reason`, "
    "`/eval update-goldens full-sha [cases=SET:CASE,…]` or `/eval help` "
    "(full-sha: all 40 hex digits of the commit you reviewed)"
)
MAX_RUNS = 100  # the config's own ceiling for num_runs
MAX_LINE = 1000
MAX_REASON = 300
_COMMAND = re.compile(r"/eval(?=\s|$)")
_SHA = re.compile(r"[0-9a-fA-F]{7,64}")
FULL_SHA_LENGTHS = (40, 64)  # SHA-1 and SHA-256 repositories
_RUNS = re.compile(r"runs=(\d{1,3})")
# eval set and case ids as `--cases` takes them (globs allowed), nothing that could mean more to a shell or markdown
_CASES = re.compile(r"cases=([A-Za-z0-9_.*?/\-]+(?::[A-Za-z0-9_.*?\-]+(?:,[A-Za-z0-9_.*?\-]+)*)?)")


class CommandError(ValueError):
    """What was wrong with a command; `quoted` is the user's own text it refers to (the reply escapes it)."""

    def __init__(self, problem: str, quoted: str | None = None) -> None:
        self.problem, self.quoted = problem, quoted
        super().__init__(problem if quoted is None else f"{problem}: {quoted}")


@dataclass(frozen=True)
class EvalCommand:
    action: Literal["eval", "accept", "help", "update-goldens"]
    sha: str | None = None  # the commit the commenter names, lower case; None: the head as GitHub records it
    runs: int | None = None  # more runs for the cases still undecided against the baseline
    cases: tuple[str, ...] = ()  # `--cases` selectors: a partial run, never a verdict on the commit
    reason: str = ""

    @property
    def partial(self) -> bool:
        return bool(self.cases)


def is_command(body: object) -> bool:
    """The comment asks for `/eval` (its first line starts with it); anything else is conversation."""
    return isinstance(body, str) and _COMMAND.match(body.lstrip()) is not None


def parse_command(body: str) -> EvalCommand:
    first = body.lstrip().split("\n", 1)[0].rstrip("\r")
    if len(first) > MAX_LINE:
        raise CommandError(f"the command line is longer than {MAX_LINE} characters")
    words = first.split()
    if not words or words[0] != "/eval":
        raise CommandError("not an /eval command", words[0] if words else "")
    words = words[1:]
    if words[:1] == ["help"]:
        if len(words) > 1:
            raise CommandError("`/eval help` takes no argument", words[1])
        return EvalCommand("help")
    if words[:1] == ["accept"]:
        return _accept(words[1:])
    if words[:1] == ["update-goldens"]:
        return _update_goldens(words[1:])
    return _evaluate(words)


def _update_goldens(words: list[str]) -> EvalCommand:
    """A push to the pull request's branch: the commit must be named, never proven from the timeline."""
    if not words or not _SHA.fullmatch(words[0]):
        raise CommandError("`/eval update-goldens` needs the full sha of the commit you reviewed, first")
    command = _evaluate(words)
    if command.runs is not None:
        raise CommandError("`/eval update-goldens` takes no runs=: it updates from the runs the config asks for")
    return EvalCommand("update-goldens", sha=command.sha, cases=command.cases)


def _accept(words: list[str]) -> EvalCommand:
    sha = words[0].lower() if words and _SHA.fullmatch(words[0]) else None
    reason = " ".join(words[1:] if sha else words)
    if not reason:
        raise CommandError("`/eval accept` needs a reason, e.g. `/eval accept the judge changed, see #12`")
    if len(reason) > MAX_REASON:
        raise CommandError(f"the reason is longer than {MAX_REASON} characters")
    return EvalCommand("accept", sha=sha, reason=reason)


def _evaluate(words: list[str]) -> EvalCommand:
    sha: str | None = None
    runs: int | None = None
    cases: list[str] = []
    for word in words:
        if _SHA.fullmatch(word):
            if sha is not None:
                raise CommandError("name one commit, not two", word)
            sha = word.lower()
        elif word.startswith("runs="):
            found = _RUNS.fullmatch(word)
            if found is None or not 2 <= int(found.group(1)) <= MAX_RUNS:
                raise CommandError(f"runs must be a whole number from 2 to {MAX_RUNS}", word)
            if runs is not None:
                raise CommandError("runs= is given twice", word)
            runs = int(found.group(1))
        elif word.startswith("cases="):
            found = _CASES.fullmatch(word)
            if found is None:
                raise CommandError("cases= takes SET or SET:CASE,CASE (letters, digits, _ . - / and globs)", word)
            cases.append(found.group(1))
        else:
            raise CommandError("unknown argument", word)
    return EvalCommand("eval", sha=sha, runs=runs, cases=tuple(cases))
