"""Errors a user can fix: each renders as one line naming the file, the field and the fix.

Anything raised as `InputError` ends the CLI with exit code 2 and no traceback; a `WriteError` (a file we could
not write: a full disk, a quota, a read-only or unwritable folder) with exit code 3, never 1, which means "the
gate failed".
"""

from __future__ import annotations

import difflib
import errno
from collections.abc import Iterable, Sequence
from pathlib import Path

from adk_eval_gate.core.clip import single_line

EXIT_BAD_INPUT = 2
EXIT_NOT_WRITTEN = 3


class InputError(Exception):
    """Bad input that the user must fix (a config, an eval set, a results file)."""

    exit_code = EXIT_BAD_INPUT
    title = "bad input"  # of its annotation in Actions

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


class CommandFileWritten(InputError):
    """The pull request's code wrote one of the runner's command files (core/command_files.py): it was put back,
    and the run fails as a gate does (exit 1), not as bad input."""

    exit_code = 1
    title = "the pull request's code wrote a runner command file"


# What to do about each way a write fails; anything else is named by the system's own words.
_WRITE_FIXES: dict[int | None, str] = {
    errno.ENOSPC: "free space on that disk, or write elsewhere, and run again",
    errno.EDQUOT: "free space within your disk quota, or write elsewhere, and run again",
    errno.EROFS: "the file system is read-only: write elsewhere",
    errno.EACCES: "make the folder writable, or write elsewhere",
    errno.EPERM: "make the folder writable, or write elsewhere",
    errno.EFBIG: "the file passed the size limit (ulimit -f) or the file system's: raise it, or write elsewhere",
}


class WriteError(InputError):
    """A file we could not write. What was written before it stays as it was (every write is atomic), and the
    command stops at once with exit code 3: a run whose files were not all written must not pass."""

    exit_code = EXIT_NOT_WRITTEN
    title = "a file could not be written"

    def __init__(self, file: str | Path, cause: OSError | str, fix: str | None = None, done: str = "") -> None:
        reason = cause if isinstance(cause, str) else (cause.strerror or str(cause))
        code = None if isinstance(cause, str) else cause.errno
        problem = f"could not be written: {reason}" + (f"; {done}" if done else "")
        super().__init__(
            file, None, problem, fix or _WRITE_FIXES.get(code, "check the disk and the folder, then run again")
        )
        self.errno, self.reason, self.done = code, reason, done

    def also(self, done: str) -> WriteError:
        """The same failure, with what was done about it since."""
        more = WriteError(self.file or "<output>", self.reason, self.fix, "; ".join(filter(None, (self.done, done))))
        more.errno = self.errno
        return more


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
