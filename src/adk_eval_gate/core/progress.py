"""Progress lines on stderr for a long phase (inference, judging): one per ~10% of the work or every 15 s,
whichever comes first, with the elapsed time and an ETA; silent when quiet."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import TextIO

PREFIX = "[adk-eval-gate]"


class ProgressLine:
    def __init__(
        self,
        total: int,
        quiet: bool,
        stream: TextIO | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.total, self.quiet, self.stream, self.clock = total, quiet, stream or sys.stderr, clock
        self.done = 0
        self.start = self.last_print = clock()
        self.step = max(1, total // 10)

    def advance(self, describe: Callable[[], str]) -> None:
        """One more unit done; `describe` says what is done so far, and is called only when a line is due."""
        self.done += 1
        now = self.clock()
        if self.quiet or not (self.done == self.total or self.done % self.step == 0 or now - self.last_print >= 15):
            return
        self.last_print = now
        elapsed = now - self.start
        eta = elapsed / self.done * (self.total - self.done)
        print(f"{PREFIX} {describe()}, {elapsed:.1f}s elapsed, ETA {eta:.0f}s", file=self.stream, flush=True)
