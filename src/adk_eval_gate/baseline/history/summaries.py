"""Every record's summary (commit, date, per eval set its criteria's means, cost, latency), read and checked when
first asked for. A reader that looks at a few records — `history show`: the trend's, the drift reference, the
flaky window — pays for those, not for all 200 (at 10,000 cases a summary is about 100 eval sets of criteria).
`check` reads every one: what a run that compares or stores (`load_history`) does before it trusts the history.

A summary's size is bounded, and so is their sum over a whole read (issue #34): a forged file of 1.2 MB whose
summaries each decompress to tens of MiB (repetitive JSON compresses a thousandfold) must not cost gigabytes or
minutes. Every summary decompressed draws on one budget per history read (`DecompressionBudget`): 16 times the
file's size, at least 16 MiB — the summaries of a real history are a part of its file, compressed about tenfold. A
parsed summary takes ~15 times its JSON in memory, so parsed summaries are kept only up to `MAX_KEPT` bytes of JSON;
a summary past it is parsed again when asked for again (drawing on the budget again).
"""

from __future__ import annotations

import zlib
from collections.abc import Iterator, Sequence
from typing import overload

from pydantic import ValidationError

from adk_eval_gate.baseline.history.record_format import HistoryRecord

# A record's summary, decompressed: ~5,000 eval sets of two criteria (100,000 cases in 1,000 eval sets take
# ~0.4 MiB); a forged one stops here. Parsing one costs up to ~30 times its JSON at the peak.
MAX_HEAD = 2 * 1024 * 1024
# The summaries (their JSON) kept parsed at once: ~35 MiB of objects at most.
MAX_KEPT = 2 * 1024 * 1024
# Every history read may decompress this much of its summaries, or `BUDGET_PER_BYTE` times its file, if more.
MIN_BUDGET = 16 * 1024 * 1024
BUDGET_PER_BYTE = 16

Stored = tuple[int, bytes]  # a record's seq and its compressed summary, not read yet


def inflate(blob: bytes, limit: int, what: str) -> bytes:
    """Decompressed, never past `limit` bytes: a forged column or summary cannot grow in memory."""
    try:
        inflater = zlib.decompressobj()
        raw = inflater.decompress(blob, limit + 1)
    except (zlib.error, TypeError):
        raise ValueError(f"{what}: not readable (damaged)") from None
    if inflater.unconsumed_tail or len(raw) > limit:
        raise ValueError(f"{what}: larger than the history can hold")
    if not inflater.eof:  # cut short
        raise ValueError(f"{what}: not readable (damaged)")
    return raw


class DecompressionBudget:
    """What one history read may still decompress of its summaries, and how much of their JSON is kept parsed."""

    def __init__(self, file_size: int) -> None:
        self.left = max(MIN_BUDGET, BUDGET_PER_BYTE * file_size)
        self.kept = 0

    def inflate(self, blob: bytes, what: str) -> bytes:
        together = f"{what}: the record summaries together decompress to more than a history can hold"
        if self.left <= 0:
            raise ValueError(together)
        try:
            raw = inflate(blob, min(MAX_HEAD, self.left), what)
        except ValueError as exc:
            if self.left < MAX_HEAD and "larger than" in str(exc):
                raise ValueError(together) from None
            raise
        self.left -= len(raw)
        return raw


def first_error(exc: ValidationError) -> str:
    error = exc.errors(include_url=False)[0]
    return f"{'.'.join(str(p) for p in error['loc']) or 'the top'}: {error['msg'].removeprefix('Value error, ')}"


def _summary(seq: int, sha: str, raw: bytes) -> HistoryRecord:
    try:
        record = HistoryRecord.model_validate_json(raw)
    except ValidationError as exc:
        raise ValueError(f"record {seq} is invalid: {first_error(exc)}") from None
    if record.sha != sha:  # the column lookups by commit use must say what the summary says
        raise ValueError(f"record {seq} is invalid: its summary names the commit {record.sha!r}, its row {sha!r}")
    return record


class Summaries(Sequence[HistoryRecord]):
    """The records' summaries, oldest first; their `cases` are empty. A summary is validated when first read
    (ValueError, one line, for one that is not ours); `shas` are the records' commits without reading any."""

    def __init__(
        self, items: list[HistoryRecord | Stored], shas: list[str], budget: DecompressionBudget | None = None
    ) -> None:
        self._items, self.shas = items, shas
        self._budget = budget or DecompressionBudget(0)  # shared by the slices and copies of one read

    def __len__(self) -> int:
        return len(self._items)

    @overload
    def __getitem__(self, at: int) -> HistoryRecord: ...

    @overload
    def __getitem__(self, at: slice) -> Summaries: ...

    def __getitem__(self, at: int | slice) -> HistoryRecord | Summaries:
        if isinstance(at, slice):
            return Summaries(self._items[at], self.shas[at], self._budget)
        item = self._items[at]
        if isinstance(item, tuple):
            raw = self._budget.inflate(item[1], f"record {item[0]}")
            parsed = _summary(item[0], self.shas[at], raw)
            if self._budget.kept + len(raw) <= MAX_KEPT:  # past it, parsed again when asked again
                self._budget.kept += len(raw)
                self._items[at] = parsed
            return parsed
        return item

    def __iter__(self) -> Iterator[HistoryRecord]:
        for at in range(len(self._items)):
            yield self[at]

    def check(self) -> None:
        """Every summary read and validated (ValueError for the first that is not ours)."""
        for _ in self:
            pass

    def copy(self) -> Summaries:
        return Summaries(list(self._items), list(self.shas), self._budget)

    def append(self, record: HistoryRecord) -> None:
        self._items.append(record)
        self.shas.append(record.sha)

    def replace(self, at: int, record: HistoryRecord) -> None:
        self._items[at], self.shas[at] = record, record.sha

    def keep_newest(self, count: int) -> None:
        self._items, self.shas = self._items[-count:], self.shas[-count:]


def summaries_of(rows: Sequence[tuple[int, str, bytes]], file_size: int = 0) -> Summaries:
    """`(seq, sha, compressed summary)` rows, oldest first, none read yet; `file_size` sets the read's budget."""
    return Summaries(
        [(seq, head) for seq, _, head in rows], [sha for _, sha, _ in rows], DecompressionBudget(file_size)
    )
