"""Errors a user can fix: each renders as one line naming the file, the field and the fix.

Anything raised as `InputError` ends the CLI with exit code 2 and no traceback.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Sequence
from pathlib import Path

from adk_eval_gate.core.clip import single_line

EXIT_BAD_INPUT = 2


class InputError(Exception):
    """Bad input that the user must fix (a config, an eval set, a results file)."""

    def __init__(
        self,
        file: str | Path | None,
        field: str | None,
        problem: str,
        fix: str | None = None,
        line: int | None = None,
    ) -> None:
        self.file = str(file) if file is not None else None
        self.field = field or None
        self.problem = problem
        self.fix = fix
        self.line = line
        super().__init__(self.render())

    def render(self) -> str:
        where = self.file or "<input>"
        if self.line is not None:
            where += f":{self.line}"
        parts = [where]
        if self.field:
            parts.append(self.field)
        message = ": ".join(parts) + f": {self.problem}"
        if self.fix:
            message += f"; {self.fix}"
        return single_line(message)  # always exactly one line, masked before the join

    def with_file(self, file: str | Path, line: int | None = None) -> InputError:
        return InputError(file, self.field, self.problem, self.fix, line if line is not None else self.line)


def did_you_mean(word: str, candidates: Iterable[str]) -> str | None:
    matches = difflib.get_close_matches(word, list(candidates), n=1, cutoff=0.6)
    return matches[0] if matches else None


def format_loc(loc: Sequence[str | int]) -> str:
    """('agents', 0, 'target', 'kind') -> 'agents[0].target.kind'."""
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += ("." if out else "") + str(part)
    return out


def one_of(values: Iterable[str]) -> str:
    return ", ".join(values)
