"""What the agent's libraries log while cases run, collapsed: each distinct record is printed once, when it first
appears, and a record that came again gets one closing line with how often it came in all.

Libraries log per call — google-adk warns "Skipping missing token usage metadata ..." on every model call of
a model that reports no usage — so a few hundred cases would otherwise bury the run's own output. Only records
that would have gone to Python's last-resort handler are collapsed (the root logger has no handler): an agent
that configures logging itself keeps its own output. Worker processes forward their records to the run's
process, so repeats are counted across workers.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable
from typing import TextIO

from adk_eval_gate.core.clip import masked_lines
from adk_eval_gate.core.foreign_lines import inert

_FORMAT = logging.Formatter()  # the last-resort handler's: the message, then any traceback


def record_text(record: logging.LogRecord) -> str:
    return _FORMAT.format(record)


class RepeatCollapser:
    """Counts log texts; prints a text the first time it comes and, at `summarise`, how often each came."""

    def __init__(self, stream: TextIO | None = None) -> None:
        self._stream = stream
        self.counts: dict[str, int] = {}

    def add(self, text: str, times: int = 1) -> None:
        seen = self.counts.get(text, 0)
        self.counts[text] = seen + times
        if not seen:
            print(inert(text), file=self._stream or sys.stderr, flush=True)  # the agent's libraries wrote it

    def summarise(self) -> None:
        for text, count in self.counts.items():
            if count > 1:
                first = masked_lines(text)[0] if text else text
                print(inert(f"{first} ({count} times in all)"), file=self._stream or sys.stderr, flush=True)
        self.counts.clear()


class _Handler(logging.Handler):
    def __init__(self, sink: Callable[[str], None]) -> None:
        super().__init__(logging.WARNING)  # the last-resort handler's level
        self._sink = sink

    def emit(self, record: logging.LogRecord) -> None:
        try:
            self._sink(record_text(record))
        except Exception:  # a log line must never fail a case
            self.handleError(record)


def install(sink: Callable[[str], None]) -> logging.Handler | None:
    """Sends what would reach the last-resort handler to `sink`; None when the root logger already has a
    handler (the agent's own logging set-up is left alone)."""
    root = logging.getLogger()
    if root.handlers:
        return None
    handler = _Handler(sink)
    root.addHandler(handler)
    return handler


def uninstall(handler: logging.Handler | None) -> None:
    if handler is not None:
        logging.getLogger().removeHandler(handler)
