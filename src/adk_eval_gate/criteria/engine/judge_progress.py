"""Progress of the judge phase on stderr, in the shape of inference's: scored so far, model calls (cached and
failed among them), elapsed time and an ETA. One line per ~10% of jobs or every 15 s; silent when quiet."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Mapping
from typing import TextIO

from adk_eval_gate.llm.client import UsageStats


class JudgeProgress:
    def __init__(
        self,
        total: int,
        stats: Mapping[str, UsageStats],
        quiet: bool,
        stream: TextIO | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.total, self.stats, self.quiet, self.stream, self.clock = (
            total,
            stats,
            quiet,
            stream or sys.stderr,
            clock,
        )
        self.done = 0
        self.start = self.last_print = clock()
        self.step = max(1, total // 10)

    def update(self) -> None:
        self.done += 1
        now = self.clock()
        if self.quiet or not (self.done == self.total or self.done % self.step == 0 or now - self.last_print >= 15):
            return
        self.last_print = now
        total = UsageStats()
        for item in self.stats.values():
            total.add(item)
        elapsed = now - self.start
        eta = elapsed / self.done * (self.total - self.done)
        print(
            f"[adk-eval-gate] judging: {self.done}/{self.total} scored, {total.calls} model calls "
            f"({total.cache_hits} cached, {total.failures} failed), {elapsed:.1f}s elapsed, ETA {eta:.0f}s",
            file=self.stream,
            flush=True,
        )
