"""Issue #34, item 7: every decoder of a history has a total budget, and a history whose records contradict each
other is refused. Crafted SQLite histories: a case id of 2**62 (the reader used to loop to it), record summaries
that each decompress to a few MiB (a 1.2 MB file used to cost `view` 2 GB), a copy of the base commit's record
placed first (read as a re-run, it moved the base to the oldest record and switched drift off)."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import time
import zlib
from pathlib import Path

import pytest

from adk_eval_gate.baseline.history.io import HistoryError, parse_json_history
from adk_eval_gate.commands.main import main
from tests.support.history_repo import SHA, make_repo
from tests.support.hostile import assert_bad_input, time_limit


@pytest.fixture(scope="module")
def blessed(tmp_path_factory) -> tuple[Path, Path]:
    """A file store with a three-record history, and a results file of the same agent."""
    root = tmp_path_factory.mktemp("budgets")
    config = make_repo(root / "repo", "{store: file, path: blessed/results.json}", cases=3)
    results = root / "run.json"
    with pytest.MonkeyPatch.context() as patch:
        for name in [k for k in os.environ if k.startswith("GITHUB_")]:
            patch.delenv(name)
        for sha in SHA[:3]:
            patch.setenv("GITHUB_SHA", sha)
            assert main(["run", "--config", str(config), "--output", str(results), "--quiet"]) == 0
            assert main(["baseline", "update", "--config", str(config), "--results", str(results)]) == 0
    return config, results


def _forged(database: Path, script: str, *params) -> bytes:
    connection = sqlite3.connect(":memory:")
    connection.deserialize(database.read_bytes())
    if params:
        connection.execute(script, params)
    else:
        connection.executescript(script)
    connection.commit()
    return connection.serialize()


@pytest.fixture
def history(blessed):
    config, _ = blessed
    database = config.parent / "blessed" / "history.db"
    original = database.read_bytes()
    yield database
    database.write_bytes(original)


def test_a_case_id_of_2_to_the_62_is_one_line_at_once(blessed, history, capsys, monkeypatch):
    for name in [k for k in os.environ if k.startswith("GITHUB_")]:
        monkeypatch.delenv(name)
    config, _ = blessed
    history.write_bytes(_forged(history, f"UPDATE cases SET id = {2**62} WHERE id = (SELECT MAX(id) FROM cases);"))
    assert len(history.read_bytes()) < 64 * 1024
    started = time.monotonic()
    line = assert_bad_input(["history", "show", "--config", str(config)], config.parent, capsys, "history.db")
    assert "case ids are not numbered 1 to N" in line and time.monotonic() - started < 5


@pytest.mark.parametrize(
    ("script", "expected"),
    [
        (f"UPDATE records SET seq = {2**63 - 1} WHERE seq = (SELECT MAX(seq) FROM records);", "a record is numbered"),
        ("UPDATE states SET id = 70000 WHERE rowid IN (SELECT rowid FROM states LIMIT 1);", "a case state is num"),
    ],
    ids=["record-number", "state-number"],
)
def test_stored_numbers_that_size_work_are_bounded(blessed, history, capsys, monkeypatch, script, expected):
    for name in [k for k in os.environ if k.startswith("GITHUB_")]:
        monkeypatch.delenv(name)
    config, _ = blessed
    try:
        history.write_bytes(_forged(history, script))
    except sqlite3.OperationalError:  # WITHOUT ROWID: no rowid to pick a row by
        history.write_bytes(_forged(history, "UPDATE states SET id = 70000 WHERE id = 1 AND case_id = 1;"))
    line = assert_bad_input(["history", "show", "--config", str(config)], config.parent, capsys, "history.db")
    assert expected in line


def _summary_bomb(database: Path, records: int, eval_sets: int) -> bytes:
    """`records` valid records, each of whose summaries decompresses to `eval_sets` eval sets (~60 bytes each)."""
    connection = sqlite3.connect(":memory:")
    connection.deserialize(database.read_bytes())
    (cases,) = connection.execute("SELECT cases FROM records ORDER BY seq LIMIT 1").fetchone()
    one = {"agent": "", "eval_set_id": "", "num_runs": 1, "criteria": {}, "cases": {}}
    top = connection.execute("SELECT MAX(seq) FROM records").fetchone()[0]
    for i in range(records):
        sha = f"{i:040x}"
        head = {"sha": sha, "date": "2026-01-01", "tool_version": "1", "eval_sets": [one] * eval_sets}
        blob = zlib.compress(json.dumps(head, separators=(",", ":")).encode(), 9)
        connection.execute("INSERT INTO records VALUES (?, ?, ?, ?)", (top + 1 + i, sha, blob, cases))
    connection.commit()
    return connection.serialize()


def _peak(argv: list[str], cwd: Path) -> tuple[int, str, int, float]:
    """Exit code, stderr, peak resident memory (bytes) and wall seconds of one command in its own process."""
    # VmHWM is this process's own peak: ru_maxrss would carry the parent's over the exec (Linux keeps it from the
    # forked or vforked image), and the test process is larger than what is measured here.
    probe = (
        "import re, sys\n"
        "from adk_eval_gate.commands.main import main\n"
        f"code = main({argv!r})\n"
        "status = open('/proc/self/status').read()\n"
        "print('peak', re.search(r'VmHWM:\\s+(\\d+) kB', status).group(1), file=sys.stderr)\n"
        "sys.exit(code)\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("GITHUB_")}
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-c", probe], cwd=cwd, env=env, capture_output=True, text=True, timeout=120)
    seconds = time.monotonic() - started
    lines = done.stderr.strip().splitlines()
    peak = int(lines[-1].split()[1]) * 1024  # Linux: KiB
    return done.returncode, "\n".join(lines[:-1]), peak, seconds


def test_summaries_that_decompress_to_gigabytes_cost_a_line_not_the_memory(blessed, history, tmp_path):
    config, results = blessed
    data = _summary_bomb(history, 150, 28_000)  # each summary ~1.8 MiB of JSON, ~270 MiB in all
    assert len(data) < 2 * 1024 * 1024
    folder = tmp_path / "artifact"
    folder.mkdir()
    (folder / "results.json").write_bytes(results.read_bytes())
    (folder / "history.db").write_bytes(data)
    code, err, peak, seconds = _peak(["view", str(folder / "results.json"), "--no-open"], tmp_path)
    assert code == 2 and len(err.splitlines()) == 1, err[-2000:]
    assert "history.db" in err and "more than a history can hold" in err, err
    assert peak < 256 * 1024 * 1024, f"{peak / 2**20:.0f} MiB"
    assert seconds < 30, seconds

    history.write_bytes(data)  # the store's history: a run that compares reads every summary, and fails closed
    out = tmp_path / "c.json"
    argv = ["compare", "--config", str(config), "--results", str(results), "--output", str(out)]
    code, err, peak, seconds = _peak(argv, config.parent)
    assert code == 1 and peak < 256 * 1024 * 1024 and seconds < 30, (code, err[-2000:], peak)
    failures = [f["text"] for f in json.loads(out.read_text())["gate"]["failures"]]
    assert any("history" in f and "more than a history can hold" in f for f in failures), failures


def test_a_copy_of_the_base_record_placed_first_is_refused_not_read_as_a_rerun(blessed, history, capsys, monkeypatch):
    for name in [k for k in os.environ if k.startswith("GITHUB_")]:
        monkeypatch.delenv(name)
    config, results = blessed
    base = SHA[2]
    script = (
        "UPDATE records SET seq = seq + 100; INSERT INTO records SELECT 1, sha, head, cases FROM records WHERE sha = ?;"
    )
    connection = sqlite3.connect(":memory:")
    connection.deserialize(history.read_bytes())
    connection.execute(script.split(";")[0])
    connection.execute(script.split(";")[1], (base,))
    connection.commit()
    history.write_bytes(connection.serialize())
    with time_limit(20):
        line = assert_bad_input(["history", "show", "--config", str(config)], config.parent, capsys, "history.db")
    assert f"two records of the commit '{base}'" in line
    monkeypatch.setenv("GITHUB_SHA", "f" * 40)
    out = config.parent / "c.json"
    capsys.readouterr()
    code = main(["compare", "--config", str(config), "--results", str(results), "--output", str(out)])
    assert code == 1  # fails closed: drift is not silently off
    assert any("two records of the commit" in f["text"] for f in json.loads(out.read_text())["gate"]["failures"])


def test_a_json_history_with_two_records_of_a_commit_is_refused():
    record = {"sha": "a" * 40, "date": "2026-01-01", "tool_version": "1", "eval_sets": []}
    text = {"schema_version": 1, "format": "adk-eval-gate history", "repository": None, "config": "c.yml"}
    data = json.dumps({**text, "records": [record, {**record, "date": "2026-01-02"}, record]}).encode()
    with pytest.raises(HistoryError, match=r"records\[1\] is a second record of the commit 'a{40}' \(records\[0\]\)"):
        parse_json_history(data, "history.json", repository=None, config="c.yml")
