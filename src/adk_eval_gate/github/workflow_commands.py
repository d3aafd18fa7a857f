"""The job log: inside GitHub Actions (GITHUB_ACTIONS=true) errors and warnings are workflow-command annotations,
which GitHub shows on the run's summary and, with a file and line, on the file; elsewhere they are plain lines.

Messages are collapsed onto one line and escaped, so nothing in them (an eval id, a reason) can start a workflow
command of its own.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from adk_eval_gate.core.clip import single_line
from adk_eval_gate.core.errors import InputError
from adk_eval_gate.core.paths import relative_to_root, repository_root
from adk_eval_gate.core.printable import printable
from adk_eval_gate.core.redaction import redact


def in_actions() -> bool:
    return os.environ.get("GITHUB_ACTIONS") == "true"


def escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def one_line(text: str) -> str:
    return single_line(text)  # masked before the join: a secret spanning lines is only recognisable before it


def annotation(
    level: str, message: str, *, file: str | None = None, line: int | None = None, title: str | None = None
) -> str:
    """`::error file=…,line=…,title=…::message` (level: error, warning or notice); masked before the escaping
    (`%` → `%25`), which would hide a secret from the log's own masking."""
    # stripped first (core/printable.py): a key split by an escape code is masked whole, and no escape reaches the log
    message, title = redact(printable(message)), redact(printable(title)) if title else title
    properties = [f"file={escape_property(file)}"] if file else []
    if file and line:
        properties.append(f"line={line}")
    if title:
        properties.append(f"title={escape_property(title)}")
    return f"::{level}{' ' + ','.join(properties) if properties else ''}::{escape_data(message)}"


def warn(message: str) -> None:
    text = one_line(message)
    print(
        annotation("warning", text, title="adk-eval-gate") if in_actions() else f"warning: {text}",
        file=sys.stderr,
        flush=True,
    )


def error(message: str) -> None:
    text = one_line(message)
    print(
        annotation("error", text, title="adk-eval-gate") if in_actions() else f"error: {text}",
        file=sys.stderr,
        flush=True,
    )


def input_error(exc: InputError) -> None:
    """Bad input: an annotation on the file and line inside Actions, `error: file:line: field: problem; fix`
    elsewhere."""
    _on_file("error", exc, f"adk-eval-gate: {exc.title}")


def input_warning(exc: InputError) -> None:
    """Input read past (a key the reference tools ignore): the same line as an error, as a warning."""
    _on_file("warning", exc, "adk-eval-gate: ignored input")


def _on_file(level: str, exc: InputError, title: str) -> None:
    if not in_actions():
        print(f"{level}: {exc.render()}", file=sys.stderr, flush=True)
        return
    shown = None
    if exc.file:
        root = repository_root(Path.cwd(), os.environ.get("GITHUB_WORKSPACE"))
        shown = relative_to_root(Path(exc.file), root) or exc.file
    print(annotation(level, exc.render(), file=shown, line=exc.line, title=title), file=sys.stderr, flush=True)
