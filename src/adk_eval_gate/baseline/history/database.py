"""The history as it is stored: one SQLite database, `history.db` (its own `schema_version`, in its `meta` table).

A record's summary (commit, date, per eval set its criteria's means, cost, latency) is one row of `records`. A case
is named once (`cases`), and its record (`history.models.CaseRecord`: hash, scores, run outcomes) is stored only
when it differs from its previous record (`changes`, keyed by case and record; a NULL row: the case left the suite).
A case that scores the same on every merge costs one row in the whole history, not one per record. So a reader
takes only what it needs: the summaries of every record (trends, the drift reference), and the cases of the few
records its window spans (flaky labels, the drift test) — the state at the window's start, then the changes inside
it. Those records are `HistoryRecord`s as the JSON history held them, so that drift and the labels are computed by
the same code on the same numbers; a case unchanged between two records is the same object in both.

A database comes from a store others can write: its tables must be exactly ours (no view, trigger or index that
would run code or work we did not ask for), and every case row read is validated by the same models.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Iterator, Sequence

from pydantic import ValidationError

from adk_eval_gate.baseline.history.models import (
    FORMAT,
    CaseRecord,
    EvalSetRecord,
    History,
    HistoryRecord,
)
from adk_eval_gate.core.numbers import MAX_RECORD_SAMPLES
from adk_eval_gate.core.schema_versions import HISTORY_DATABASE_VERSION

MAGIC = b"SQLite format 3\x00"  # the first bytes of every SQLite database: how a store's file is told from JSON

SCHEMA = (
    "CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    "CREATE TABLE records(seq INTEGER PRIMARY KEY, sha TEXT NOT NULL, head TEXT NOT NULL)",
    "CREATE TABLE names(id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE)",
    "CREATE TABLE cases(id INTEGER PRIMARY KEY, agent TEXT NOT NULL, eval_set_id TEXT NOT NULL, "
    "eval_id TEXT NOT NULL, UNIQUE(agent, eval_set_id, eval_id))",
    "CREATE TABLE changes(case_id INTEGER NOT NULL, seq INTEGER NOT NULL, data TEXT, "
    "PRIMARY KEY(case_id, seq)) WITHOUT ROWID",
)

CaseName = tuple[str, str, str]  # agent, eval set, case
State = dict[int, str]  # case id → its encoded record, for the cases in a record


def _connect() -> sqlite3.Connection:
    connection = sqlite3.connect(":memory:", isolation_level=None)
    connection.execute("PRAGMA trusted_schema = OFF")
    return connection


def _our_schema() -> list[tuple[str, str, str | None]]:
    probe = _connect()
    for statement in SCHEMA:
        probe.execute(statement)
    return probe.execute("SELECT type, name, sql FROM sqlite_master ORDER BY name").fetchall()


EXPECTED_SCHEMA = _our_schema()


class StoredHistory:
    """One history database in memory. Reading is windowed (`records`, `full`); `with_record` returns a new one."""

    def __init__(self, connection: sqlite3.Connection) -> None:
        self._db = connection
        meta = dict(connection.execute("SELECT key, value FROM meta"))
        self.format, self.schema_version = meta.get("format"), meta.get("schema_version")
        self.repository: str | None = meta.get("repository") or None
        self.config: str = meta.get("config", "")
        rows = connection.execute("SELECT seq, sha, head FROM records ORDER BY seq").fetchall()
        self._seqs = [seq for seq, _, _ in rows]
        self.records: list[HistoryRecord] = []  # every record's summary, oldest first; their `cases` are empty
        for seq, _, head in rows:
            try:
                self.records.append(HistoryRecord.model_validate_json(head))
            except ValidationError as exc:
                raise ValueError(f"record {seq} is invalid: {_first(exc)}") from None
        self._names = dict(connection.execute("SELECT name, id FROM names"))

    # --- building --------------------------------------------------------------------------------------------

    @classmethod
    def empty(cls, repository: str | None, config: str) -> StoredHistory:
        connection = _connect()
        connection.execute("PRAGMA page_size = 1024")  # a small history stays a few kilobytes (a page per table)
        for statement in SCHEMA:
            connection.execute(statement)
        meta = {
            "format": FORMAT,
            "schema_version": str(HISTORY_DATABASE_VERSION),
            "repository": repository or "",
            "config": config,
        }
        connection.executemany("INSERT INTO meta VALUES (?, ?)", meta.items())
        return cls(connection)

    @classmethod
    def from_bytes(cls, data: bytes) -> StoredHistory:
        """ValueError (one line) for a database that is not one of ours."""
        connection = _connect()
        try:
            connection.deserialize(data)
            # SQLite's advice for databases from elsewhere: no schema-defined functions, every cell's size checked.
            connection.execute("PRAGMA trusted_schema = OFF")
            connection.execute("PRAGMA cell_size_check = ON")
            found = connection.execute("SELECT type, name, sql FROM sqlite_master ORDER BY name").fetchall()
        except sqlite3.DatabaseError as exc:
            raise ValueError(f"is not a readable SQLite database ({exc})") from None
        if found != EXPECTED_SCHEMA:
            raise ValueError("is not an adk-eval-gate history database (its tables are not the expected ones)")
        try:
            return cls(connection)
        except sqlite3.DatabaseError as exc:
            raise ValueError(f"is damaged ({exc})") from None

    @classmethod
    def from_history(cls, history: History) -> StoredHistory:
        """A JSON history (schema_version 1) in the database: how an old history.json is migrated."""
        stored = cls.empty(history.repository, history.config)
        for record in history.records:
            stored._add(record, len(history.records) + 1)
        return stored

    def to_bytes(self) -> bytes:
        return self._db.serialize()

    def with_record(self, record: HistoryRecord, max_records: int) -> StoredHistory:
        """This history with `record` joined (a commit already recorded has its record replaced where it stands),
        and only the newest `max_records` kept. This one is left as it was."""
        connection = _connect()
        connection.deserialize(self.to_bytes())
        copy = StoredHistory(connection)
        copy._add(record, max_records)
        return copy

    def _case_ids(self, names: Iterable[CaseName]) -> dict[CaseName, int]:
        ids = {tuple(row[1:]): row[0] for row in self._db.execute("SELECT id, agent, eval_set_id, eval_id FROM cases")}
        new = [name for name in dict.fromkeys(names) if name not in ids]
        if new:
            self._db.executemany("INSERT INTO cases(agent, eval_set_id, eval_id) VALUES (?, ?, ?)", new)
            ids = {tuple(r[1:]): r[0] for r in self._db.execute("SELECT id, agent, eval_set_id, eval_id FROM cases")}
        return ids

    def _name_id(self, name: str) -> int:
        if name not in self._names:
            self._names[name] = self._db.execute("INSERT INTO names(name) VALUES (?)", (name,)).lastrowid
        return self._names[name]

    def _encode(self, case: CaseRecord) -> str:
        scores = [[self._name_id(n), m, p, s] for n, (m, p, s) in case.scores.items()]
        runs = [[self._name_id(n), a, b] for n, (a, b) in case.runs.items()]
        return json.dumps([case.case_hash, scores, runs] if runs else [case.case_hash, scores], separators=(",", ":"))

    def _state_at(self, seq: int) -> State:
        """Every case as it stood at record `seq`: its newest row at or before it (SQLite takes `data` from the
        row whose `seq` is the maximum)."""
        rows = self._db.execute(
            "SELECT case_id, MAX(seq), data FROM changes WHERE seq <= ? GROUP BY case_id", (seq,)
        ).fetchall()
        return {case_id: data for case_id, _, data in rows if data is not None}

    def _write_diff(self, seq: int, new: State, old: State) -> None:
        rows = [(cid, seq, data) for cid, data in new.items() if old.get(cid) != data]
        rows += [(cid, seq, None) for cid in old if cid not in new]
        self._db.executemany("INSERT OR REPLACE INTO changes VALUES (?, ?, ?)", rows)

    def _add(self, record: HistoryRecord, max_records: int) -> None:
        ids = self._case_ids((s.agent, s.eval_set_id, eid) for s in record.eval_sets for eid in s.cases)
        new = {
            ids[(s.agent, s.eval_set_id, eid)]: self._encode(case)
            for s in record.eval_sets
            for eid, case in s.cases.items()
        }
        head = _head(record).model_dump_json()
        self._db.execute("BEGIN")
        same = next((i for i in range(len(self.records) - 1, -1, -1) if self.records[i].sha == record.sha), None)
        if same is None:
            seq = (self._seqs[-1] + 1) if self._seqs else 1
            self._write_diff(seq, new, self._state_at(seq - 1))
            self._db.execute("INSERT INTO records VALUES (?, ?, ?)", (seq, record.sha, head))
            self._seqs.append(seq)
            self.records.append(_head(record))
        else:  # the record after it was stored as changes from this one: it is rewritten against the new one
            seq = self._seqs[same]
            after = self._seqs[same + 1] if same + 1 < len(self._seqs) else None
            later = self._state_at(after) if after is not None else None
            before = self._state_at(self._seqs[same - 1]) if same else {}
            self._db.execute("DELETE FROM changes WHERE seq IN (?, ?)", (seq, after if after is not None else seq))
            self._write_diff(seq, new, before)
            if after is not None and later is not None:
                self._write_diff(after, later, new)
            self._db.execute("UPDATE records SET head = ? WHERE seq = ?", (head, seq))
            self.records[same] = _head(record)
        if len(self._seqs) > max_records:  # the new oldest record takes the state it stood at in full
            oldest = self._seqs[-max_records]
            state = self._state_at(oldest)
            self._db.execute("DELETE FROM changes WHERE seq <= ?", (oldest,))
            self._db.executemany("INSERT INTO changes VALUES (?, ?, ?)", [(c, oldest, d) for c, d in state.items()])
            self._db.execute("DELETE FROM records WHERE seq < ?", (oldest,))
            self._seqs, self.records = self._seqs[-max_records:], self.records[-max_records:]
        self._db.execute("COMMIT")
        pages, free = (self._db.execute(f"PRAGMA {p}").fetchone()[0] for p in ("page_count", "freelist_count"))
        if free * 4 > pages:  # dropped records leave free pages behind; the stored file should not carry them
            self._db.execute("VACUUM")

    # --- reading ---------------------------------------------------------------------------------------------

    def full(self, indices: Iterable[int]) -> dict[int, HistoryRecord]:
        """The records at these positions of `records`, with their cases: only the rows between the first and
        the last are read."""
        wanted = sorted(set(indices))
        if not wanted:
            return {}
        return dict(self._walk(wanted[0], wanted[-1], set(wanted)))

    def iter_full(self) -> Iterator[HistoryRecord]:
        """Every record with its cases, oldest first, one at a time (the JSON export)."""
        if self._seqs:
            for _, record in self._walk(0, len(self._seqs) - 1, set(range(len(self._seqs)))):
                yield record

    def _walk(self, first: int, last: int, wanted: set[int]) -> Iterator[tuple[int, HistoryRecord]]:
        lo, hi = self._seqs[first], self._seqs[last]
        names = {v: k for k, v in self._names.items()}
        where = dict(
            (row[0], tuple(row[1:])) for row in self._db.execute("SELECT id, agent, eval_set_id, eval_id FROM cases")
        )
        sets: dict[tuple[str, str], dict[str, CaseRecord]] = {}
        decoded: dict[int, tuple[str, CaseRecord]] = {}

        def apply(case_id: int, data: str | None) -> None:
            if case_id not in where:
                raise ValueError(f"a change names the unknown case {case_id}")
            agent, eval_set_id, eval_id = where[case_id]
            cases = sets.setdefault((agent, eval_set_id), {})
            if data is None:
                cases.pop(eval_id, None)
                decoded.pop(case_id, None)
            elif decoded.get(case_id, ("",))[0] != data:
                record = _decode(data, names, f"{agent}/{eval_set_id}/{eval_id}")
                decoded[case_id] = (data, record)
                cases[eval_id] = record

        for case_id, data in self._state_at(lo).items():
            apply(case_id, data)
        rows = self._db.execute(
            "SELECT seq, case_id, data FROM changes WHERE seq > ? AND seq <= ? ORDER BY seq", (lo, hi)
        )
        pending = next(rows, None)
        for position in range(first, last + 1):
            seq = self._seqs[position]
            while pending is not None and pending[0] <= seq:
                apply(pending[1], pending[2])
                pending = next(rows, None)
            if position in wanted:
                yield position, _with_cases(self.records[position], sets)


def _first(exc: ValidationError) -> str:
    error = exc.errors(include_url=False)[0]
    return f"{'.'.join(str(p) for p in error['loc']) or 'the top'}: {error['msg'].removeprefix('Value error, ')}"


def _head(record: HistoryRecord) -> HistoryRecord:
    """The record without its cases: its row in `records`."""
    return record.model_copy(update={"eval_sets": [s.model_copy(update={"cases": {}}) for s in record.eval_sets]})


def _decode(data: str, names: dict[int, str], where: str) -> CaseRecord:
    try:
        parts = json.loads(data)
        case_hash, scores, *rest = parts
        runs = rest[0] if rest else []
        return CaseRecord.model_validate(
            {
                "case_hash": case_hash,
                "scores": {names[n]: (m, p, s) for n, m, p, s in scores},
                "runs": {names[n]: (a, b) for n, a, b in runs},
            }
        )
    except ValidationError as exc:
        raise ValueError(f"the case {where} is invalid at {_first(exc)}") from None
    except (ValueError, TypeError, KeyError, RecursionError):
        raise ValueError(f"the case {where} is not a case record") from None


def _with_cases(head: HistoryRecord, sets: dict[tuple[str, str], dict[str, CaseRecord]]) -> HistoryRecord:
    """The record with its cases, built without validating again what was validated row by row; the whole
    record's bound is checked here, as `HistoryRecord` checks it."""
    eval_sets = [
        EvalSetRecord.model_construct(
            **{name: getattr(s, name) for name in EvalSetRecord.model_fields if name != "cases"},
            cases=dict(sets.get((s.agent, s.eval_set_id), {})),
        )
        for s in head.eval_sets
    ]
    total = sum(n for s in eval_sets for c in s.cases.values() for _, _, n in c.scores.values())
    if total > MAX_RECORD_SAMPLES:
        raise ValueError(f"record {head.sha}: {total} samples, over the {MAX_RECORD_SAMPLES} a run can produce")
    return HistoryRecord.model_construct(
        sha=head.sha, date=head.date, tool_version=head.tool_version, eval_sets=eval_sets
    )


def history_of(stored: StoredHistory, records: Sequence[HistoryRecord] | None = None) -> History:
    """As a JSON history (tests, small exports): every record with its cases."""
    return History.model_construct(
        repository=stored.repository,
        config=stored.config,
        records=list(records if records is not None else stored.iter_full()),
    )
