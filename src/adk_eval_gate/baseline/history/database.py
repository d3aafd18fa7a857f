"""The history as it is stored: one SQLite database, `history.db` (its own `schema_version`, in its `meta` table).

A record's summary (commit, date, per eval set its criteria's means, cost, latency) is one row of `records`. A case
is named once (`cases`), and each distinct record of it (`history.record_format.CaseRecord`: hash, scores, run outcomes)
is stored once (`states`, numbered per case). A record then says, per case, which of its states it holds: one
16-bit number a case, the whole column compressed (`records.cases`). A case that scores the same on every merge
is one state in the whole history and a run of equal numbers in every record, which compresses to nearly nothing;
a flaky case is a handful of states it moves between. A record is read on its own (no chain of changes to
follow), so a reader takes only what it needs: the summaries of every record (trends, the drift reference), and the
cases of the few records its window holds (flaky labels, the drift test). Those records are `HistoryRecord`s as the
JSON history held them, so drift and the labels are computed by the same code on the same numbers.

A database comes from a store others can write: its tables must be exactly ours (no view, trigger or index that
would run code or work we did not ask for), a record's column must decompress to no more than its cases, and
every state read is validated by the same models.
"""

from __future__ import annotations

import json
import re
import sqlite3
import sys
import zlib
from array import array
from collections.abc import Iterable, Iterator, Sequence

from pydantic import ValidationError

from adk_eval_gate.baseline.history.record_format import (
    FORMAT,
    CaseRecord,
    EvalSetRecord,
    History,
    HistoryRecord,
)
from adk_eval_gate.baseline.history.sqlite_image import image_of, load_image
from adk_eval_gate.baseline.history.summaries import Summaries, first_error, inflate, summaries_of
from adk_eval_gate.core.numbers import MAX_RECORD_SAMPLES
from adk_eval_gate.core.schema_versions import HISTORY_DATABASE_VERSION

MAGIC = b"SQLite format 3\x00"  # the first bytes of every SQLite database: how a store's file is told from JSON

SCHEMA = (
    "CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    "CREATE TABLE records(seq INTEGER PRIMARY KEY, sha TEXT NOT NULL, head BLOB NOT NULL, cases BLOB NOT NULL)",
    "CREATE TABLE names(id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE)",
    "CREATE TABLE cases(id INTEGER PRIMARY KEY, agent TEXT NOT NULL, eval_set_id TEXT NOT NULL, "
    "eval_id TEXT NOT NULL, UNIQUE(agent, eval_set_id, eval_id))",
    "CREATE TABLE states(case_id INTEGER NOT NULL, id INTEGER NOT NULL, data TEXT NOT NULL, "
    "last_seq INTEGER NOT NULL, PRIMARY KEY(case_id, id)) WITHOUT ROWID",
)
MAX_STATE = 65_535  # a record's column holds 16-bit state numbers; 0: the case is not in the record
MAX_SEQ = 2**53  # records are numbered 1, 2, …: a billion merges a second for a century stays below this
HASH_MAX = CaseRecord.model_fields["case_hash"].metadata[0].max_length  # the model's own bound on a case hash
CANONICAL = re.compile(rf'\["([0-9a-zA-Z_-]{{0,{HASH_MAX}}})",(.*)\]', re.DOTALL)  # a state as `_encode` writes it

CaseName = tuple[str, str, str]  # agent, eval set, case


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

    def __init__(self, connection: sqlite3.Connection, file_size: int = 0) -> None:
        self._db = connection
        meta = dict(connection.execute("SELECT key, value FROM meta"))
        self.format, self.schema_version = meta.get("format"), meta.get("schema_version")
        self.repository: str | None = meta.get("repository") or None
        self.config: str = meta.get("config", "")
        rows = connection.execute("SELECT seq, sha, head FROM records ORDER BY seq").fetchall()
        self._seqs = [seq for seq, _, _ in rows]
        self.records: Summaries = summaries_of(rows, file_size)  # every summary, read when first asked for
        self._names: dict[str, int] = dict(connection.execute("SELECT name, id FROM names"))

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
            load_image(connection, data)
            # SQLite's advice for databases from elsewhere: no schema-defined functions, every cell's size checked.
            connection.execute("PRAGMA trusted_schema = OFF")
            connection.execute("PRAGMA cell_size_check = ON")
            found = connection.execute("SELECT type, name, sql FROM sqlite_master ORDER BY name").fetchall()
        except sqlite3.DatabaseError as exc:
            raise ValueError(f"is not a readable SQLite database ({exc})") from None
        if found != EXPECTED_SCHEMA:
            raise ValueError("is not an adk-eval-gate history database (its tables are not the expected ones)")
        try:
            _check_numbering(connection)
            return cls(connection, len(data))
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
        return image_of(self._db)

    def with_record(self, record: HistoryRecord, max_records: int) -> StoredHistory:
        """This history with `record` joined (a commit already recorded has its record replaced where it stands),
        and only the newest `max_records` kept. This one is left as it was."""
        connection = _connect()
        load_image(connection, self.to_bytes())
        copy = object.__new__(StoredHistory)  # what was read and checked is taken over, not read again
        copy.__dict__.update(self.__dict__)
        copy._db, copy._seqs, copy.records, copy._names = (
            connection,
            list(self._seqs),
            self.records.copy(),
            dict(self._names),
        )
        copy._add(record, max_records)
        # A database of an earlier version is rewritten as this one: its records now may hold what it could not.
        connection.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'", (str(HISTORY_DATABASE_VERSION),))
        copy.schema_version = str(HISTORY_DATABASE_VERSION)
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
            row_id = self._db.execute("INSERT INTO names(name) VALUES (?)", (name,)).lastrowid
            assert row_id is not None  # an INSERT always sets it
            self._names[name] = row_id
        return self._names[name]

    def _encode(self, case: CaseRecord) -> str:
        scores = [[self._name_id(n), m, p, s] for n, (m, p, s) in case.scores.items()]
        runs = [[self._name_id(n), a, b] for n, (a, b) in case.runs.items()]
        parts: list[object] = [case.case_hash, scores]
        if runs or case.pass_k is not None:
            parts.append(runs)
        if case.pass_k is not None:  # schema_version 4: the case's pass^k tally, last
            parts.append(list(case.pass_k))
        return json.dumps(parts, separators=(",", ":"))

    def _column(self, encoded: dict[int, str], seq: int) -> bytes:
        """The record's column: per case id, the number of its state (new states are stored here), compressed.
        Every state the record uses is marked as used by it, so that dropping old records can drop their states."""
        known: dict[tuple[int, str], int] = {}
        top: dict[int, int] = {}
        for case_id, number, data in self._db.execute("SELECT case_id, id, data FROM states"):
            known[(case_id, data)] = number
            top[case_id] = max(top.get(case_id, 0), number)
        column = array("H", bytes(2 * max(encoded, default=0)))
        new, used = [], []
        for case_id, data in encoded.items():
            number = known.get((case_id, data))
            if number is None:
                number = top.get(case_id, 0) + 1
                if number > MAX_STATE:  # only a history of more records than the config may keep gets here
                    raise ValueError(f"case {case_id} has more than {MAX_STATE} states")
                top[case_id] = number
                new.append((case_id, number, data, seq))
            else:
                used.append((seq, case_id, number))
            column[case_id - 1] = number
        self._db.executemany("INSERT INTO states VALUES (?, ?, ?, ?)", new)
        self._db.executemany("UPDATE states SET last_seq = MAX(last_seq, ?) WHERE case_id = ? AND id = ?", used)
        if sys.byteorder == "big":
            column.byteswap()
        return zlib.compress(column.tobytes(), 6)

    def _add(self, record: HistoryRecord, max_records: int) -> None:
        ids = self._case_ids((s.agent, s.eval_set_id, eid) for s in record.eval_sets for eid in s.cases)
        encoded = {
            ids[(s.agent, s.eval_set_id, eid)]: self._encode(case)
            for s in record.eval_sets
            for eid, case in s.cases.items()
        }
        head = zlib.compress(_head(record).model_dump_json().encode(), 6)  # its keys repeat per eval set
        self._db.execute("BEGIN")
        shas = self.records.shas
        same = next((i for i in range(len(shas) - 1, -1, -1) if shas[i] == record.sha), None)
        if same is None:
            seq = (self._seqs[-1] + 1) if self._seqs else 1
            column = self._column(encoded, seq)
            self._db.execute("INSERT INTO records VALUES (?, ?, ?, ?)", (seq, record.sha, head, column))
            self._seqs.append(seq)
            self.records.append(_head(record))
        else:  # a commit recorded again: its record is replaced where it stands
            seq = self._seqs[same]
            column = self._column(encoded, seq)
            self._db.execute("UPDATE records SET head = ?, cases = ? WHERE seq = ?", (head, column, seq))
            self.records.replace(same, _head(record))
        if len(self._seqs) > max_records:  # the oldest records go, and the states only they used
            oldest = self._seqs[-max_records]
            self._db.execute("DELETE FROM records WHERE seq < ?", (oldest,))
            self._db.execute("DELETE FROM states WHERE last_seq < ?", (oldest,))
            self._seqs = self._seqs[-max_records:]
            self.records.keep_newest(max_records)
        self._db.execute("COMMIT")
        pages, free = (self._db.execute(f"PRAGMA {p}").fetchone()[0] for p in ("page_count", "freelist_count"))
        if free * 4 > pages:  # dropped records leave free pages behind; the stored file should not carry them
            self._db.execute("VACUUM")

    # --- reading ---------------------------------------------------------------------------------------------

    def full(self, indices: Iterable[int]) -> dict[int, HistoryRecord]:
        """The records at these positions of `records`, with their cases: only their columns, and the states they
        name, are read."""
        return dict(self._read(sorted(set(indices))))

    def iter_full(self) -> Iterator[HistoryRecord]:
        """Every record with its cases, oldest first, one at a time (the JSON export)."""
        for start in range(0, len(self._seqs), 20):  # a few columns at a time: memory stays that of a window
            for _, record in self._read(list(range(start, min(start + 20, len(self._seqs))))):
                yield record

    def _read(self, positions: list[int]) -> Iterator[tuple[int, HistoryRecord]]:
        if not positions:
            return
        names = {v: k for k, v in self._names.items()}
        where = {
            row[0]: tuple(row[1:]) for row in self._db.execute("SELECT id, agent, eval_set_id, eval_id FROM cases")
        }
        columns = {}
        for position in positions:
            (blob,) = self._db.execute("SELECT cases FROM records WHERE seq = ?", (self._seqs[position],)).fetchone()
            columns[position] = _numbers(blob, len(where), self.records.shas[position])
        # A case's place, by its id's position in a column: looked up once, not once per record.
        places = [((w[0], w[1]), w[2]) for w in (where.get(i + 1) for i in range(max(where, default=0))) if w]
        if len(places) != len(where):  # ids are 1.. in order (INTEGER PRIMARY KEY from empty); one missing: not ours
            raise ValueError("its cases table is not one this version writes")
        # A state is read (by its key) and decoded the first time a record names it: a case in the same state in
        # many records is one object, and its sample count (the record's bound, below) is counted once.
        decoded: dict[tuple[int, int], tuple[CaseRecord, int]] = {}
        bodies: dict[str, CaseRecord] = {}
        read = "SELECT data FROM states WHERE case_id = ? AND id = ?"
        for position in positions:
            sets: dict[tuple[str, str], dict[str, CaseRecord]] = {}
            samples: dict[tuple[str, str], int] = {}
            for index, number in enumerate(columns[position]):
                if not number:
                    continue
                key = (index + 1, number)
                found = decoded.get(key)
                set_key, eval_id = places[index]
                if found is None:
                    row = self._db.execute(read, key).fetchone()
                    if row is None:
                        raise ValueError(f"record {self.records.shas[position]} names a missing case state {key}")
                    case = _decode(row[0], names, f"{set_key[0]}/{set_key[1]}/{eval_id}", bodies)
                    found = decoded[key] = (case, sum(n for _, _, n in case.scores.values()))
                cases = sets.get(set_key)
                if cases is None:
                    cases = sets[set_key] = {}
                cases[eval_id] = found[0]
                samples[set_key] = samples.get(set_key, 0) + found[1]
            yield position, _with_cases(self.records[position], sets, samples)


def _check_numbering(connection: sqlite3.Connection) -> None:
    """Ids as this module numbers them, so that no loop or allocation sized by a stored id outgrows the rows: case
    ids are 1..N (a record's column is indexed by them; one case with id 2**62 would size a loop to it), record
    numbers increase from 1 and stay far below SQLite's largest integer (the next record takes the next one)."""
    cases, top = connection.execute("SELECT COUNT(*), COALESCE(MAX(id), 0) FROM cases").fetchone()
    low = connection.execute("SELECT COALESCE(MIN(id), 1) FROM cases").fetchone()[0]
    if top != cases or low != 1:
        raise ValueError("is not an adk-eval-gate history database (its case ids are not numbered 1 to N)")
    first, last = connection.execute("SELECT COALESCE(MIN(seq), 1), COALESCE(MAX(seq), 0) FROM records").fetchone()
    if first < 1 or last > MAX_SEQ:
        raise ValueError(f"is not an adk-eval-gate history database (a record is numbered {min(first, last)})")
    # One record per commit, as `_add` keeps it: a second record of a commit (a copy of the base's placed first)
    # would be read as a re-run that replaces the first where it stands, and move the drift reference.
    twice = connection.execute("SELECT sha FROM records GROUP BY sha HAVING COUNT(*) > 1 LIMIT 1").fetchone()
    if twice is not None:
        raise ValueError(f"holds two records of the commit {twice[0]!r}; a history holds one record per commit")
    states = connection.execute("SELECT COALESCE(MIN(id), 1), COALESCE(MAX(id), 0) FROM states").fetchone()
    if states[0] < 1 or states[1] > MAX_STATE:
        raise ValueError(f"is not an adk-eval-gate history database (a case state is numbered {states[1]})")


def _numbers(blob: bytes, cases: int, sha: str) -> array[int]:
    """A record's column: at most one number per known case."""
    raw = inflate(blob, 2 * cases, f"record {sha}: its cases column")
    if len(raw) % 2:
        raise ValueError(f"record {sha}: its cases column is not readable (damaged)")
    column = array("H", raw)
    if sys.byteorder == "big":
        column.byteswap()
    return column


def _head(record: HistoryRecord) -> HistoryRecord:
    """The record without its cases: its row in `records`."""
    return record.model_copy(update={"eval_sets": [s.model_copy(update={"cases": {}}) for s in record.eval_sets]})


def _decode(data: str, names: dict[int, str], where: str, bodies: dict[str, CaseRecord]) -> CaseRecord:
    """A state as a `CaseRecord`, validated by the model. Most states differ from others only in the case's hash
    (every case that passes everything has the same scores): the rest is validated once per distinct text
    (`bodies`), and the hash, a short string, on its own."""
    try:
        canonical = CANONICAL.fullmatch(data)  # as this module writes it: no need to parse the hash out
        if canonical is not None:
            case_hash, body = canonical.group(1), canonical.group(2)
            rest = None
        else:
            case_hash, *rest = json.loads(data)
            body = json.dumps(rest, separators=(",", ":"))[1:-1]
        if body not in bodies:
            rest = json.loads(f"[{body}]") if rest is None else rest
            scores, *more = rest
            runs = more[0] if more else []
            if len(more) > 2:
                raise ValueError("too many parts")
            bodies[body] = CaseRecord.model_validate(
                {
                    "case_hash": "",
                    "scores": {names[n]: (m, p, s) for n, m, p, s in scores},
                    "runs": {names[n]: (a, b) for n, a, b in runs},
                    "pass_k": more[1] if len(more) == 2 else None,
                }
            )
        if not isinstance(case_hash, str) or len(case_hash) > HASH_MAX:
            raise ValueError("case_hash")
        valid = bodies[body]
        return CaseRecord.model_construct(
            case_hash=case_hash, scores=valid.scores, runs=valid.runs, pass_k=valid.pass_k
        )
    except ValidationError as exc:
        raise ValueError(f"the case {where} is invalid at {first_error(exc)}") from None
    except (ValueError, TypeError, KeyError, RecursionError):
        raise ValueError(f"the case {where} is not a case record") from None


def _with_cases(
    head: HistoryRecord, sets: dict[tuple[str, str], dict[str, CaseRecord]], samples: dict[tuple[str, str], int]
) -> HistoryRecord:
    """The record with its cases, built without validating again what was validated row by row; the whole
    record's bound is checked here, as `HistoryRecord` checks it."""
    eval_sets = [
        EvalSetRecord.model_construct(
            **{name: getattr(s, name) for name in EvalSetRecord.model_fields if name != "cases"},
            cases=dict(sets.get((s.agent, s.eval_set_id), {})),
        )
        for s in head.eval_sets
    ]
    total = sum(samples.get((s.agent, s.eval_set_id), 0) for s in head.eval_sets)
    if total > MAX_RECORD_SAMPLES:
        raise ValueError(f"record {head.sha}: {total} samples, over the {MAX_RECORD_SAMPLES} a run can produce")
    return HistoryRecord.model_construct(
        sha=head.sha, date=head.date, tool_version=head.tool_version, eval_sets=eval_sets, provenance=head.provenance
    )


def history_of(stored: StoredHistory, records: Sequence[HistoryRecord] | None = None) -> History:
    """As a JSON history (tests, small exports): every record with its cases."""
    return History.model_construct(
        repository=stored.repository,
        config=stored.config,
        records=list(records if records is not None else stored.iter_full()),
    )
