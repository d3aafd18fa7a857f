"""Lines the pull request's code printed, made inert before they reach the job log.

GitHub's runner reads the job log for workflow commands: a line that starts with `::` once trimmed (`::error`,
`::add-mask::`, `::stop-commands::`, the deprecated `::set-output` and `::save-state`) and, in the older syntax,
`##[` anywhere in a line. Setup commands, agents (their prints, their libraries' logs) and metric functions are
the pull request's code, and what they print reaches our log: a line of theirs must never be taken for a command
of ours — `::stop-commands::` would silence our annotations, `::set-output name=passed::true` would speak for the
gate. So every such line goes through `inert` on its way out (our own commands are written by
`github/workflow_commands.py` and never pass here).

Nothing is removed: the line is shown as it was, with a marker in front that a reader sees and the runner does not
parse (`| `), and `##[` is broken by a space.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import IO

MARK = "| "
# The runner's two command syntaxes: "::name ...::value" at the start of a trimmed line, "##[name ...]" anywhere.
_V1 = "##["
_V1_BROKEN = "# #["
# Lines read from a child's pipe at a time: a child that never ends a line cannot make us hold more than this.
MAX_LINE = 64 * 1024


def inert(text: str) -> str:
    """`text` (one line or many) with no line the runner would read as a workflow command."""
    if "::" not in text and _V1 not in text:
        return text  # the usual line: nothing a runner parses
    return "".join(_inert_line(line) for line in text.splitlines(keepends=True))


def _inert_line(line: str) -> str:
    line = line.replace(_V1, _V1_BROKEN)
    # .NET's Trim() removes Unicode white space; str.strip() removes the same set and a few more, so a line
    # that reads as a command there also starts with "::" here.
    return MARK + line if line.strip().startswith("::") else line


def forward_lines(pipe: IO[bytes], write: Callable[[str], object]) -> threading.Thread:
    """Copies a child's output to `write` line by line (at most MAX_LINE characters at a time), made inert, on a
    daemon thread; the pipe is closed when the child's end closes."""

    def copy() -> None:
        with pipe:
            while chunk := pipe.readline(MAX_LINE):
                write(inert(chunk.decode("utf-8", errors="replace")))

    thread = threading.Thread(target=copy, name="adk-eval-gate-forward", daemon=True)
    thread.start()
    return thread
