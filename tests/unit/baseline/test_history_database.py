"""The history database (issue 29): what it stores equals what the JSON history held, record for record, under any
sequence of appends, replaced commits and trims; windowed reads equal full reads; the labels, trends and drift it
yields equal the JSON history's; an earlier version's history.json is read as it was and migrated; a database
that is not ours is refused in one line; a history too large for the branch store says so, with the fix."""

from __future__ import annotations

import json
import random
import shutil
import sqlite3
import zlib
from pathlib import Path

import pytest

from adk_eval_gate.baseline.history import StoredHistory, history_summary
from adk_eval_gate.baseline.history.io import HistoryError, HistoryState, parse_history
from adk_eval_gate.baseline.history.record_format import (
    CaseRecord,
    CriterionRecord,
    EvalSetRecord,
    History,
    HistoryRecord,
)
from adk_eval_gate.baseline.history.records import appended
from adk_eval_gate.baseline.history.sqlite_image import image_of, load_image
from adk_eval_gate.baseline.stores import branch
from adk_eval_gate.commands.main import main
from adk_eval_gate.config.history import FlakySettings, HistorySection
from adk_eval_gate.config.workflow_settings import GateSettings
from tests.support.fake_github import FakeGitHub
from tests.support.history_repo import SHA, ci_push, history_json, make_repo, set_broken

V1 = Path(__file__).parents[2] / "support" / "history_v1"
CRITERIA = ("tool_trajectory_avg_score", "response_match_score")


def random_record(rng: random.Random, sha: str, cases: int) -> HistoryRecord:
    """A record of two eval sets whose cases come and go, get edited, and score and flake at random."""
    eval_sets = []
    for set_id in ("a", "b"):
        case_records = {}
        for i in range(cases):
            if rng.random() < 0.1:  # not in this run's suite
                continue
            scores, runs = {}, {}
            for name in CRITERIA:
                samples = rng.choice((1, 1, 3))
                passes = rng.randint(0, samples) if rng.random() < 0.3 else samples
                scores[name] = (round(passes / samples, 6), passes, samples)
                if samples == 3 and rng.random() < 0.5:
                    runs[name] = (min(passes, 1), 1)
            case_records[f"q{i}"] = CaseRecord(case_hash=f"{rng.randint(0, 2):016x}", scores=scores, runs=runs)
        criteria = {
            name: CriterionRecord(
                threshold=rng.choice((1.0, 0.8)),
                config_hash="c" * 16,
                mean=rng.random(),
                pass_rate=rng.random(),
                samples=10,
                cases=len(case_records),
            )
            for name in CRITERIA
        }
        eval_sets.append(
            EvalSetRecord(
                agent="agent", eval_set_id=set_id, num_runs=3, run_outcomes=True, criteria=criteria, cases=case_records
            )
        )
    return HistoryRecord(sha=sha, date="2026-11-26T10:00:00+00:00", tool_version="0.2.0", eval_sets=eval_sets)


def dumped(records) -> list[dict]:
    return [r.model_dump() for r in records]


@pytest.mark.parametrize("seed", range(6))
def test_appends_replacements_and_trims_store_exactly_what_the_json_history_holds(seed):
    rng = random.Random(seed)
    max_records = rng.randint(2, 8)
    json_history = History(repository="o/r", config="eval-gate.yml", records=[])
    stored = StoredHistory.empty("o/r", "eval-gate.yml")
    for step in range(25):
        # A re-run of a commit already recorded (the newest or an older one) replaces its record where it stands.
        sha = SHA[rng.randint(max(0, step - 4), step)]
        record = random_record(rng, sha, cases=12)
        json_history = appended(json_history, record, max_records)
        before = stored.to_bytes()
        stored = stored.with_record(record, max_records)
        assert stored.to_bytes() != before or step == 0
        again = StoredHistory.from_bytes(stored.to_bytes())  # what the store gives back
        assert dumped(again.iter_full()) == dumped(json_history.records), f"step {step}"
        assert [h.sha for h in again.records] == [r.sha for r in json_history.records]
        # Any window reads exactly the records a full read gives.
        count = len(json_history.records)
        wanted = rng.sample(range(count), rng.randint(1, count))
        window = again.full(wanted)
        assert sorted(window) == sorted(wanted)
        assert all(window[i].model_dump() == json_history.records[i].model_dump() for i in wanted)


class WholeHistory:
    """The history as the JSON file gave it before: every record with every case, in memory."""

    def __init__(self, history: History) -> None:
        self.records = list(history.records)

    def full(self, indices) -> dict[int, HistoryRecord]:
        return {i: self.records[i] for i in indices}


@pytest.mark.parametrize("seed", range(4))
def test_labels_trends_and_the_drift_reference_equal_the_json_historys(seed):
    rng = random.Random(100 + seed)
    history = History(repository="o/r", config="eval-gate.yml", records=[])
    for step in range(30):
        history = appended(history, random_record(rng, SHA[step], cases=15), 30)
    flaky = FlakySettings(records=rng.randint(2, 12), min_samples=rng.randint(1, 6))
    settings = HistorySection(max_records=30, trend=rng.randint(2, 20), flaky=flaky)
    gate = GateSettings.model_validate({"drift": {"window": rng.randint(1, 40)}, "quarantine": "flaky"})
    stored = StoredHistory.from_bytes(StoredHistory.from_history(history).to_bytes())

    def summary(of) -> dict:
        state = HistoryState(settings, "test", "o/r", "eval-gate.yml", history=of)
        return history_summary(state, gate).model_dump()

    new, old = summary(stored), summary(WholeHistory(history))
    assert new == old
    assert new["flaky"], "the generated history should hold flaky cases, or this compares nothing"


# --- an earlier version's history.json ---------------------------------------------------------------------------


def v1_repo(tmp_path: Path) -> Path:
    config = make_repo(tmp_path / "repo", "{store: file, path: blessed/results.json}", cases=8,
                       extra="history: {flaky: {min_samples: 3}}\n")  # fmt: skip
    (config.parent / "blessed").mkdir()
    shutil.copy(V1 / "history.json", config.parent / "blessed" / "history.json")
    return config


def compared_history(config: Path, tmp_path: Path, name: str) -> dict:
    set_broken(config.parent, {1}, 8)  # the seventh commit's agent, as the old version compared it
    results = tmp_path / f"{name}.json"
    main(["run", "--config", str(config), "--output", str(results), "--quiet"])  # 1: q1 fails its threshold
    out = tmp_path / f"{name}-comparison.json"
    main(["compare", "--config", str(config), "--results", str(results), "--output", str(out)])
    history = json.loads(out.read_text())["history"]
    for row in history["drift"]:  # added since (issue 36.5): where the slide began, which that version never said
        assert row.pop("began")["sha"] in {r["sha"] for r in json.loads((V1 / "history.json").read_text())["records"]}
    return {key: value for key, value in history.items() if key != "source"}


def test_a_real_old_history_json_says_what_it_said_then_and_migrates_record_for_record(tmp_path, monkeypatch, capsys):
    for name in [k for k in __import__("os").environ if k.startswith("GITHUB_")]:
        monkeypatch.delenv(name)
    config = v1_repo(tmp_path)
    monkeypatch.chdir(config.parent)
    old_records = json.loads((V1 / "history.json").read_text())["records"]
    expected = json.loads((V1 / "comparison-history.json").read_text())
    expected.pop("source")
    # Read as it is: `history show` and a comparison say exactly what the version that wrote it said.
    capsys.readouterr()
    assert main(["history", "show", "--config", str(config)]) == 0
    assert capsys.readouterr().out == (V1 / "history-show.txt").read_text()
    assert compared_history(config, tmp_path, "legacy") == expected
    # The same history as a database says the same.
    legacy = config.parent / "blessed" / "history.json"
    stored = parse_history(legacy.read_bytes(), "x", repository=None, config="eval-gate.yml")
    (config.parent / "blessed" / "history.db").write_bytes(stored.to_bytes())
    legacy.rename(legacy.with_suffix(".json.bak"))
    assert compared_history(config, tmp_path, "database") == expected
    # The write path migrates: the next `baseline update` writes history.db with every old record kept.
    (config.parent / "blessed" / "history.db").unlink()
    legacy.with_suffix(".json.bak").rename(legacy)
    monkeypatch.setenv("GITHUB_SHA", SHA[7])
    main(["run", "--config", str(config), "--output", str(tmp_path / "next.json"), "--quiet"])
    capsys.readouterr()
    assert main(["baseline", "update", "--config", str(config), "--results", str(tmp_path / "next.json")]) == 0
    assert "history: 8 record(s), blessed/history.json migrated to history.db" in capsys.readouterr().out
    migrated = history_json((config.parent / "blessed" / "history.db").read_bytes())
    assert migrated["records"][:7] == old_records and migrated["records"][7]["sha"] == SHA[7]
    assert main(["history", "show", "--config", str(config), "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == migrated


# --- a database that is not ours ---------------------------------------------------------------------------------


def _database(change: str) -> bytes:
    stored = StoredHistory.from_history(History.model_validate_json((V1 / "history.json").read_bytes()))
    connection = sqlite3.connect(":memory:")
    load_image(connection, stored.to_bytes())  # Connection.deserialize is Python 3.11's
    connection.executescript(change)
    return image_of(connection)


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (lambda: b"SQLite format 3\x00" + b"\x00" * 90, "is not a readable SQLite database"),
        (
            lambda: _database("CREATE TRIGGER t AFTER INSERT ON meta BEGIN DELETE FROM records; END;"),
            "is not an adk-eval-gate history database (its tables are not the expected ones)",
        ),
        (
            lambda: _database("CREATE VIEW v AS SELECT 1;"),
            "is not an adk-eval-gate history database (its tables are not the expected ones)",
        ),
        (lambda: _database("UPDATE meta SET value = '5' WHERE key = 'schema_version';"), "has schema_version '5'"),
        (lambda: _database("UPDATE meta SET value = 'x/y' WHERE key = 'repository';"), "in the repository x/y"),
        (
            lambda: _database("UPDATE states SET data = '[\"ab\",[[1,1.0,2,1]]]';"),
            "the case qa/qa/q0 is invalid at the top: scores.tool_trajectory_avg_score: 2 passes out of 1 samples",
        ),
        (lambda: _database("UPDATE states SET data = '{';"), "is not a case record"),
        (lambda: _database("UPDATE states SET data = '[7,[[1,1.0,1,1]]]';"), "is not a case record"),
        (
            lambda: _database(f"UPDATE records SET cases = X'{zlib.compress(bytes(2_000_000)).hex()}';"),
            "its cases column: larger than the history can hold",
        ),
        (lambda: _database("UPDATE records SET cases = X'00ff';"), "its cases column: not readable (damaged)"),
        (lambda: _database("DELETE FROM states;"), "names a missing case state"),
        (
            lambda: _database(f"UPDATE records SET head = X'{zlib.compress(b'{}').hex()}';"),
            "record 1 is invalid: sha: Field required",
        ),
        (lambda: _database("UPDATE records SET head = X'00';"), "record 1: not readable (damaged)"),
    ],
    ids=[
        "damaged",
        "trigger",
        "view",
        "schema-version",
        "other-repository",
        "impossible-counts",
        "not-json",
        "hash-not-text",
        "column-bomb",
        "column-damaged",
        "state-missing",
        "head",
        "head-damaged",
    ],
)
def test_a_database_that_is_not_ours_is_refused_in_one_line(data, expected):
    with pytest.raises((HistoryError, ValueError)) as caught:  # ValueError: a case row, read by a window
        stored = parse_history(data(), "blessed/history.db", repository="o/r", config="eval-gate.yml")
        stored.full(range(len(stored.records)))  # case rows are checked as a window reads them
    assert expected in str(caught.value) and "\n" not in str(caught.value)


def test_history_show_checks_the_summaries_it_reads_and_a_damaged_one_is_one_line(tmp_path, monkeypatch, capsys):
    for name in [k for k in __import__("os").environ if k.startswith("GITHUB_")]:
        monkeypatch.delenv(name)
    config = v1_repo(tmp_path)
    blessed = config.parent / "blessed"
    (blessed / "history.json").unlink()
    (blessed / "history.db").write_bytes(_database("UPDATE records SET head = X'00' WHERE seq = 7;"))
    capsys.readouterr()
    assert main(["history", "show", "--config", str(config)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "blessed/history.db: record 7: not readable (damaged)" in err, err
    # A run that compares or stores reads every summary first: the same record refused the same way.
    (blessed / "history.db").write_bytes(_database("UPDATE records SET head = X'00' WHERE seq = 1;"))
    with pytest.raises(HistoryError, match="record 1: not readable"):
        parse_history((blessed / "history.db").read_bytes(), "h", repository=None, config="eval-gate.yml")


def test_a_forged_case_row_fails_the_comparison_closed(tmp_path, monkeypatch, capsys):
    for name in [k for k in __import__("os").environ if k.startswith("GITHUB_")]:
        monkeypatch.delenv(name)
    config = v1_repo(tmp_path)
    blessed = config.parent / "blessed"
    (blessed / "history.json").unlink()
    (blessed / "history.db").write_bytes(_database("UPDATE states SET data = '[\"ab\",[[1,1.0,2,1]]]';"))
    set_broken(config.parent, {1}, 8)
    results = tmp_path / "now.json"
    main(["run", "--config", str(config), "--output", str(results), "--quiet"])
    out = tmp_path / "c.json"
    assert main(["compare", "--config", str(config), "--results", str(results), "--output", str(out)]) == 1
    (failure,) = (f["text"] for f in json.loads(out.read_text())["gate"]["failures"])
    assert failure.startswith("history: blessed/history.db: the case qa/qa/q") and "2 passes out of 1" in failure


# --- the branch store's limit -----------------------------------------------------------------------------------


def test_a_history_over_the_contents_api_limit_stores_neither_and_says_the_fix(tmp_path, monkeypatch, capsys):
    config = make_repo(tmp_path / "repo", "{store: branch, branch: eval-data}", cases=4)
    with FakeGitHub() as fake:
        assert ci_push(monkeypatch, fake, tmp_path, config, SHA[0], tmp_path / "p0") == 0
        stored = fake.state.files[("eval-data", "baselines/history.db")]
        # GitHub's real limit is 100 MB; this history is a few kilobytes, so the limit is lowered to reach it.
        monkeypatch.setattr(branch, "MAX_CONTENTS_BYTES", len(stored) // 2)
        capsys.readouterr()
        assert ci_push(monkeypatch, fake, tmp_path, config, SHA[1], tmp_path / "p1") == 1
        err = capsys.readouterr().err
        limit = f"over the {len(stored) // 2:,} GitHub's contents API takes; lower history.max_records, or keep the"
        assert limit in err and "Traceback" not in err
        assert len([line for line in err.splitlines() if "contents API" in line]) == 1
        assert "neither the baseline nor the history was stored" in err
        assert fake.state.files[("eval-data", "baselines/history.db")] == stored
        assert ("eval-data", f"baselines/{SHA[1]}.json") not in fake.state.files


def test_a_baseline_over_the_contents_api_limit_is_one_line_before_anything_is_written(tmp_path, monkeypatch, capsys):
    # At 100,000 cases the history (64 MB) fits the contents API and the baseline results (350 MB) do not: the
    # branch store's wall there is the baseline. It is said before the history or anything else is written.
    config = make_repo(tmp_path / "repo", "{store: branch, branch: eval-data}", cases=40)
    with FakeGitHub() as fake:
        assert ci_push(monkeypatch, fake, tmp_path, config, SHA[0], tmp_path / "p0") == 0
        stored = dict(fake.state.files)
        baseline = len(stored[("eval-data", f"baselines/{SHA[0]}.json")])
        history = len(stored[("eval-data", "baselines/history.db")])
        limit = baseline - 200  # the next baseline is as large; the history with one record more stays below
        assert history * 2 < limit
        monkeypatch.setattr(branch, "MAX_CONTENTS_BYTES", limit)
        capsys.readouterr()
        assert ci_push(monkeypatch, fake, tmp_path, config, SHA[1], tmp_path / "p1") == 1
        err = capsys.readouterr().err
        (line,) = [line for line in err.splitlines() if "contents API" in line]
        assert "Traceback" not in err and line.startswith("::error")
        assert f"over the {limit:,} GitHub's contents API takes; keep the baseline in the artifact store" in line
        assert "neither the baseline nor the history was stored" in line and "nothing was changed" not in line
        assert fake.state.files == stored  # not the history, not the baseline, not the pointer


# --- report.html from an artifact's folder ------------------------------------------------------------------------


def test_view_draws_the_trend_from_the_database_beside_the_results_and_refuses_a_damaged_one(
    tmp_path, monkeypatch, capsys
):
    from adk_eval_gate.commands.view import render
    from adk_eval_gate.report.html import embedded_data

    config = make_repo(tmp_path / "repo", "{store: artifact, name: adk-eval-gate-results}", cases=3)
    with FakeGitHub() as fake:
        assert ci_push(monkeypatch, fake, tmp_path, config, SHA[0], tmp_path / "out") == 0
    data = embedded_data(render(tmp_path / "out" / "results.json").read_text())
    assert [r["sha"] for r in data["history"]] == [SHA[0]]  # the trend's one record
    (tmp_path / "out" / "history.json").write_bytes(b"SQLite format 3\x00" + b"\xff" * 200)
    capsys.readouterr()
    assert main(["view", str(tmp_path / "out" / "results.json"), "--no-open"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "out/history.json: is not a readable SQLite database" in err, err


def test_a_history_past_the_read_limit_says_what_to_do_about_it_in_one_line(tmp_path, monkeypatch, capsys):
    for name in [k for k in __import__("os").environ if k.startswith("GITHUB_")]:
        monkeypatch.delenv(name)
    config = v1_repo(tmp_path)
    with open(config.parent / "blessed" / "history.db", "wb") as handle:  # sparse: no disk is filled
        handle.truncate(513 * 1024 * 1024)
    capsys.readouterr()
    assert main(["history", "show", "--config", str(config)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1, err
    assert "blessed/history.db: could not be read: it is 537919488 bytes, over the 536870912 byte limit" in err
    assert "move it aside to start a new history, and lower history.max_records" in err
    assert "re-run when the store answers" not in err


# --- Python 3.10: no Connection.serialize / deserialize ------------------------------------------------------------


@pytest.mark.parametrize("seed", range(2))
def test_without_serialize_as_on_python_3_10_the_database_round_trips_the_same(seed, monkeypatch):
    from adk_eval_gate.baseline.history import sqlite_image

    monkeypatch.setattr(sqlite_image, "NATIVE", False)  # the temporary file and backup path 3.10 takes
    test_appends_replacements_and_trims_store_exactly_what_the_json_history_holds(seed)
    with pytest.raises(HistoryError) as caught:
        parse_history(b"SQLite format 3\x00" + b"\xff" * 200, "h.db", repository="o/r", config="eval-gate.yml")
    assert "h.db: is not a readable SQLite database" in str(caught.value)


# --- history show imports what it needs ----------------------------------------------------------------------------


def test_history_show_over_a_file_store_imports_neither_google_genai_nor_the_github_client(tmp_path):
    # Importing google-genai's types (through the eval set models) was a second of `history show`'s 3 s at 10,000
    # cases; the GitHub client is for the stores that need it.
    import subprocess
    import sys

    config = v1_repo(tmp_path)
    script = (
        "import sys\n"
        "from adk_eval_gate.commands.main import main\n"
        f"code = main(['history', 'show', '--config', {str(config)!r}])\n"
        "heavy = sorted(m for m in ('google.genai', 'adk_eval_gate.github.client',"
        " 'adk_eval_gate.evalsets.adk_eval_schema') if m in sys.modules)\n"
        "print('EXIT', code, 'HEAVY', heavy)\n"
    )
    env = {k: v for k, v in __import__("os").environ.items() if not k.startswith("GITHUB_")}
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, check=False)
    assert "History: blessed/history.json, 7 record(s)" in done.stdout, done.stderr
    assert done.stdout.strip().endswith("EXIT 0 HEAVY []"), done.stdout[-500:]
