"""agents-cli metrics in the history (issue 35, item 7): their records keep means on the metric's own scale,
bounded as every score is (±1e15), while every other criterion stays held to [0, 1]; histories written before
(JSON schema_version 1, database schema_version 2) are still read, and a database is rewritten as the current
version when its next record joins; the paired sign-flip test drift uses for them gives exact p-values."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from pydantic import ValidationError

from adk_eval_gate.baseline.history.io import HistoryError, parse_history
from adk_eval_gate.baseline.history.record_format import (
    CaseRecord,
    CriterionRecord,
    EvalSetRecord,
    History,
    HistoryRecord,
)
from adk_eval_gate.baseline.history.sqlite_image import image_of, load_image
from adk_eval_gate.baseline.history.trend import sparkline
from adk_eval_gate.baseline.stats import sign_flip_test

V1 = Path(__file__).parents[2] / "support" / "history_v1"


def _criterion(mean: float, own_scale: bool) -> CriterionRecord:
    return CriterionRecord(
        threshold=0.0, config_hash="c" * 16, mean=mean, pass_rate=1.0, samples=2, cases=2, own_scale=own_scale
    )


def _record(sha: str, mean: float, own_scale: bool = True) -> HistoryRecord:
    cases = {f"c{i}": CaseRecord(case_hash=f"{i:016x}", scores={"quality": (mean, 1, 1)}) for i in range(2)}
    eval_set = EvalSetRecord(
        agent="travel_helper",
        eval_set_id="basic-dataset",
        num_runs=1,
        run_outcomes=True,
        criteria={"quality": _criterion(mean, own_scale)},
        cases=cases,
    )
    return HistoryRecord(sha=sha, date="2026-11-28T00:00:00", tool_version="0", eval_sets=[eval_set])


def test_a_metric_on_its_own_scale_keeps_its_means_and_others_stay_in_unit_range():
    assert _record("a", 4.5).eval_sets[0].cases["c0"].scores["quality"][0] == 4.5
    assert _record("a", -1e12).eval_sets[0].criteria["quality"].mean == -1e12  # a custom metric's number
    with pytest.raises(ValidationError, match=r"mean 4\.5 is outside \[0, 1\]"):
        _record("a", 4.5, own_scale=False)
    with pytest.raises(ValidationError, match="less than or equal to 1000000000000000"):
        _record("a", 2e15)  # past the range every stored number keeps (core/numbers.py)
    with pytest.raises(ValidationError, match=r"cases\.c0\.scores\.quality: mean 3\.0 is outside \[0, 1\]"):
        EvalSetRecord(
            agent="a",
            eval_set_id="s",
            num_runs=1,
            criteria={"quality": _criterion(0.5, own_scale=False)},
            cases={"c0": CaseRecord(case_hash="0" * 16, scores={"quality": (3.0, 1, 1)})},
        )


def test_a_record_of_adk_criteria_reads_as_it_did_before():
    dumped = json.loads(_record("a", 0.5, own_scale=False).model_dump_json())
    assert "own_scale" not in dumped["eval_sets"][0]["criteria"]["quality"]
    assert json.loads(_record("a", 4.5).model_dump_json())["eval_sets"][0]["criteria"]["quality"]["own_scale"]


def test_histories_of_earlier_versions_are_read_and_a_database_is_rewritten_as_this_version():
    v1 = (V1 / "history.json").read_bytes()
    assert json.loads(v1)["schema_version"] == 1
    stored = parse_history(v1, "history.json", repository=None, config="eval-gate.yml")
    connection = sqlite3.connect(":memory:", isolation_level=None)  # autocommit: the image holds each change
    load_image(connection, stored.to_bytes())
    connection.execute("UPDATE meta SET value = '2' WHERE key = 'schema_version'")  # as the previous version wrote
    old_database = image_of(connection)
    old = parse_history(old_database, "history.db", repository=None, config="eval-gate.yml")
    assert old.schema_version == "2" and len(old.records) == len(stored.records)
    newer = old.with_record(_record("f" * 40, 4.5), 200)
    assert newer.schema_version == "4" and old.schema_version == "2"
    again = parse_history(newer.to_bytes(), "history.db", repository=None, config="eval-gate.yml")
    assert again.schema_version == "4" and again.records[-1].eval_sets[0].criteria["quality"].mean == 4.5
    assert again.records[0] == stored.records[0]
    connection.execute("UPDATE meta SET value = '5' WHERE key = 'schema_version'")
    with pytest.raises(HistoryError, match="has schema_version '5'; this version reads 2 or 3 or 4"):
        parse_history(image_of(connection), "history.db", repository=None, config="eval-gate.yml")
    as_json = History(repository=None, config="eval-gate.yml", records=[_record("a", 4.5)]).model_dump_json()
    assert json.loads(as_json)["schema_version"] == 3


def test_the_sign_flip_test_is_exact_on_case_means():
    drop = sign_flip_test([-1.1] * 12)
    assert drop is not None and drop.delta == pytest.approx(-1.1)
    assert drop.p_drop == pytest.approx(1 / 4096) and drop.p_rise == 1.0 and drop.min_p_drop == pytest.approx(1 / 4096)
    mixed = sign_flip_test([-1.0, -1.0, 0.5])  # sums of ±1 ±1 ±0.5: -2.5 and -1.5 at or below the observed -1.5
    assert mixed is not None and mixed.p_drop == pytest.approx(2 / 8)
    same = sign_flip_test([0.0, 0.0])
    assert same is not None and same.p_drop == 1.0 and same.p_rise == 1.0
    assert sign_flip_test([]) is None
    sampled = sign_flip_test([-0.5] * 20)  # 2^20 sign patterns: sampled, never below one in the draws made
    assert sampled is not None and sampled.method == "sampled paired sign-flip" and sampled.p_drop < 0.001


def test_a_sparkline_on_a_1_to_5_scale_does_not_turn_a_wobble_into_a_cliff():
    assert len(set(sparkline([4.50, 4.52, 4.49, 4.51]))) <= 2  # 0.03 on a 5-point scale: flat
    assert sparkline([4.5, 4.0, 3.5]) == "█▅▁"  # half a point a step: the whole height
    assert sparkline([0.9, 1.0]) == "▁█"  # a [0, 1] criterion as before
