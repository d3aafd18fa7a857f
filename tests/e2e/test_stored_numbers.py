"""Numbers read back from stored files are finite and bounded before anything uses them: a history (and the drift
reference record in it), a baseline or results file, a comparison file. NaN, ±Infinity (which Python's json
module and pydantic's parser accept) and counts past what a run can produce are refused in one line naming the
file and the field, never taken: a NaN threshold would silently turn the drift test off, a forged sample count
would exhaust memory."""

from __future__ import annotations

import json
import re
import sqlite3
import zlib
from pathlib import Path

import pytest

from adk_eval_gate.baseline.comparison_format import Comparison
from adk_eval_gate.baseline.history import StoredHistory, history_text
from adk_eval_gate.baseline.history.record_format import History
from adk_eval_gate.commands.main import main
from adk_eval_gate.core.numbers import MAX_CASE_SAMPLES, MAX_COUNT, MAX_RECORD_SAMPLES
from adk_eval_gate.results.results_format import ResultsFile
from tests.support.history_repo import SHA, make_repo
from tests.support.hostile import assert_bad_input, time_limit

CRITERION = "tool_trajectory_avg_score"


@pytest.fixture(scope="module")
def blessed(tmp_path_factory) -> tuple[Path, Path]:
    """A file store with a two-record history, and a results file of the same agent, made once."""
    root = tmp_path_factory.mktemp("stored")
    config = make_repo(root / "repo", "{store: file, path: blessed/results.json}", cases=3)
    results = root / "run.json"
    with pytest.MonkeyPatch.context() as patch:
        for sha in SHA[:2]:
            patch.setenv("GITHUB_SHA", sha)
            assert main(["run", "--config", str(config), "--output", str(results), "--quiet"]) == 0
            assert main(["baseline", "update", "--config", str(config), "--results", str(results)]) == 0
    return config, results


def _forge(text: str, pattern: str, replacement: str) -> str:
    forged, count = re.subn(pattern, replacement, text, count=1)
    assert count == 1, f"{pattern!r} not in the file"
    return forged


# (what is forged, a regular expression over the stored history, its replacement, the field named)
HISTORY_ATTACKS = [
    ("NaN threshold", r'"threshold":1\.0', '"threshold":NaN', "criteria.tool_trajectory_avg_score.threshold"),
    ("-Infinity threshold", r'"threshold":1\.0', '"threshold":-Infinity', "threshold"),
    ("Infinity cost", r'"cost_usd":(null|[0-9.e-]+)', '"cost_usd":Infinity', "cost_usd"),
    ("huge latency", r'"latency_seconds":(null|[0-9.e-]+)', '"latency_seconds":1e400', "latency_seconds"),
    ("10^10 samples of a case", r'"q0":\{"case_hash":"(\w+)","scores":\{"tool_trajectory_avg_score":\[1\.0,1,1\]',
     r'"q0":{"case_hash":"\1","scores":{"tool_trajectory_avg_score":[1.0,10000000000,10000000000]', "q0"),
    ("10^10 samples of a criterion", r'"samples":3', '"samples":10000000000', "samples"),
    ("num_runs past the config's cap", r'"num_runs":1', '"num_runs":1000000000', "num_runs"),
]  # fmt: skip


def _forge_database(data: bytes, pattern: str, replacement: str) -> bytes:
    """The same forgery in the database's record rows (their summaries are the JSON of a record without cases)."""
    connection = sqlite3.connect(":memory:")
    connection.deserialize(data)
    heads = connection.execute("SELECT seq, head FROM records ORDER BY seq").fetchall()
    seq, head = heads[0]
    forged = zlib.compress(_forge(zlib.decompress(head).decode(), pattern, replacement).encode())
    connection.execute("UPDATE records SET head = ? WHERE seq = ?", (forged, seq))
    connection.commit()
    return connection.serialize()


# A case row of the database is not JSON of this shape: test_history_database.py forges those.
FORGERIES = [(kind, *attack) for kind in ("history.json", "history.db") for attack in HISTORY_ATTACKS
             if not (kind == "history.db" and attack[0].endswith("of a case"))]  # fmt: skip


@pytest.mark.parametrize(
    ("kind", "attack", "pattern", "forged", "field"), FORGERIES, ids=[f"{f[0]}: {f[1]}" for f in FORGERIES]
)
def test_a_forged_number_in_the_history_is_refused_in_one_line(
    blessed, kind, attack, pattern, forged, field, tmp_path, capsys
):
    config, results = blessed
    database = config.parent / "blessed" / "history.db"
    original = database.read_bytes()
    legacy = config.parent / "blessed" / "history.json"
    try:
        # The first record is the drift reference of the next pull request: the forgery sits where it would count.
        if kind == "history.json":  # an earlier version's file, read when no database is there
            database.unlink()
            legacy.write_text(_forge(history_text(StoredHistory.from_bytes(original)), pattern, forged))
        else:
            database.write_bytes(_forge_database(original, pattern, forged))
        with time_limit(10):  # refused on sight: no MemoryError, no hang over 10^10 samples
            line = assert_bad_input(["history", "show", "--config", str(config)], config.parent, capsys, field)
        assert kind in line and ("records[0]" if kind == "history.json" else "record 1 is invalid") in line
        # `compare` fails closed on the history instead of comparing with the drift test turned off.
        capsys.readouterr()
        code = main(["compare", "--config", str(config), "--results", str(results), "--output", str(tmp_path / "c")])
        out = capsys.readouterr().out
        assert code == 1 and "history" in out and field.split(".")[-1] in out
    finally:
        legacy.unlink(missing_ok=True)
        database.write_bytes(original)


def test_a_record_whose_cases_together_claim_too_many_samples_is_refused():
    each = MAX_CASE_SAMPLES
    cases = {f"c{i}": {"case_hash": "h", "scores": {CRITERION: [1.0, each, each]}} for i in range(101)}
    record = {
        "sha": "a" * 40,
        "date": "2026-01-01",
        "tool_version": "1",
        "eval_sets": [{"agent": "a", "eval_set_id": "s", "num_runs": 1, "criteria": {}, "cases": cases}],
    }
    assert 101 * each > MAX_RECORD_SAMPLES
    with pytest.raises(ValueError, match=f"over the {MAX_RECORD_SAMPLES}"):
        History.model_validate({"repository": None, "config": "c.yml", "records": [record]})


# (forged in a results file used as a baseline, its replacement, the field named)
RESULTS_ATTACKS = [
    (r'"duration_seconds":[0-9.e-]+', '"duration_seconds":NaN', "duration_seconds"),
    (r'"cost_usd":[0-9.e-]+', '"cost_usd":Infinity', "cost_usd"),
    (r'"input_tokens":\d+', f'"input_tokens":{MAX_COUNT + 1}', "input_tokens"),
    (r'"num_runs":1', '"num_runs":101', "num_runs"),
    (r'"threshold":1\.0', '"threshold":-Infinity', "threshold"),
]


@pytest.mark.parametrize(("pattern", "forged", "field"), RESULTS_ATTACKS, ids=[a[2] for a in RESULTS_ATTACKS])
def test_a_forged_number_in_a_baseline_is_refused_by_every_reader(blessed, pattern, forged, field, tmp_path, capsys):
    _, results = blessed
    text = _forge(json.dumps(json.loads(results.read_text()), separators=(",", ":")), pattern, forged)
    baseline = tmp_path / "baseline.json"
    baseline.write_text(text)
    line = assert_bad_input(
        ["compare", "--results", str(results), "--baseline", str(baseline)], tmp_path, capsys, field
    )
    assert "baseline.json" in line
    # The branch and artifact stores read with pydantic's JSON parser, which accepts NaN and Infinity too.
    with pytest.raises(ValueError, match=r"finite number|less than or equal"):
        ResultsFile.model_validate_json(text)


def test_a_comparison_file_with_a_nan_is_refused(blessed, tmp_path, capsys):
    config, results = blessed
    folder = tmp_path / "artifact"
    folder.mkdir()
    (folder / "results.json").write_text(results.read_text())
    assert main(
        ["compare", "--config", str(config), "--results", str(results), "--output", str(tmp_path / "c.json")]
    ) in (0, 1)
    comparison = json.loads((tmp_path / "c.json").read_text())
    Comparison.model_validate(comparison)  # as written: accepted
    comparison["rows"][0]["p_value"] = float("nan")
    (folder / "comparison.json").write_text(json.dumps(comparison))
    line = assert_bad_input(["view", str(folder), "--no-open"], tmp_path, capsys, "comparison.json", "rows[0].p_value")
    assert "Traceback" not in line
