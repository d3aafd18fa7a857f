"""Every record's summary (commit, date, per eval set its criteria's means, cost, latency), read and checked when
first asked for. A reader that looks at a few records — `history show`: the trend's, the drift reference, the
flaky window — pays for those, not for all 200 (at 10,000 cases a summary is about 100 eval sets of criteria).
`check` reads every one: what a run that compares or stores (`load_history`) does before it trusts the history.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterator, Sequence
from typing import overload

from pydantic import ValidationError

from adk_eval_gate.baseline.history.models import HistoryRecord

MAX_HEAD = 64 * 1024 * 1024  # a record's summary, decompressed: 100,000 eval sets' criteria; a forged one stops here

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


def first_error(exc: ValidationError) -> str:
    error = exc.errors(include_url=False)[0]
    return f"{'.'.join(str(p) for p in error['loc']) or 'the top'}: {error['msg'].removeprefix('Value error, ')}"


def _summary(seq: int, sha: str, head: bytes) -> HistoryRecord:
    try:
        record = HistoryRecord.model_validate_json(inflate(head, MAX_HEAD, f"record {seq}"))
    except ValidationError as exc:
        raise ValueError(f"record {seq} is invalid: {first_error(exc)}") from None
    if record.sha != sha:  # the column lookups by commit use must say what the summary says
        raise ValueError(f"record {seq} is invalid: its summary names the commit {record.sha!r}, its row {sha!r}")
    return record


class Summaries(Sequence[HistoryRecord]):
    """The records' summaries, oldest first; their `cases` are empty. A summary is validated when first read
    (ValueError, one line, for one that is not ours); `shas` are the records' commits without reading any."""

    def __init__(self, items: list[HistoryRecord | Stored], shas: list[str]) -> None:
        self._items, self.shas = items, shas

    def __len__(self) -> int:
        return len(self._items)

    @overload
    def __getitem__(self, at: int) -> HistoryRecord: ...

    @overload
    def __getitem__(self, at: slice) -> Summaries: ...

    def __getitem__(self, at: int | slice) -> HistoryRecord | Summaries:
        if isinstance(at, slice):
            return Summaries(self._items[at], self.shas[at])
        item = self._items[at]
        if isinstance(item, tuple):
            item = _summary(item[0], self.shas[at], item[1])
            self._items[at] = item
        return item

    def __iter__(self) -> Iterator[HistoryRecord]:
        for at in range(len(self._items)):
            yield self[at]

    def check(self) -> None:
        """Every summary read and validated (ValueError for the first that is not ours)."""
        for _ in self:
            pass

    def copy(self) -> Summaries:
        return Summaries(list(self._items), list(self.shas))

    def append(self, record: HistoryRecord) -> None:
        self._items.append(record)
        self.shas.append(record.sha)

    def replace(self, at: int, record: HistoryRecord) -> None:
        self._items[at], self.shas[at] = record, record.sha

    def keep_newest(self, count: int) -> None:
        self._items, self.shas = self._items[-count:], self.shas[-count:]


def summaries_of(rows: Sequence[tuple[int, str, bytes]]) -> Summaries:
    """`(seq, sha, compressed summary)` rows, oldest first, none read yet."""
    return Summaries([(seq, head) for seq, _, head in rows], [sha for _, sha, _ in rows])
