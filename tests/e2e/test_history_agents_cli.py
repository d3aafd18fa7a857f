"""The history covers agents-cli metrics on their own scale (issue 35, item 7): agents-cli's own results files
(`agents-cli eval grade`, a 1–5 `quality` metric without a threshold) stored as the baseline on eleven
default-branch commits through `baseline update` (the file store keeps the history beside the baseline).

Every merge takes 0.1 point off every case: each step is below `gate.tolerance` (0.3 points), so no pull request
fails on its own, yet the eleventh is 1.1 points down on the drift reference: `gate.fail_on: [drift]` fails it.
Counting passes (what the drift gate does for ADK criteria) would never see it: without a threshold every score
passes. The same metric, unchanged for ten merges, passes; `history show` draws the slide on the 1–5 scale.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from adk_eval_gate.commands.main import main
from tests.support.history_repo import SHA, history_json
from tests.support.paths import ROOT

MERGES = 10
CASES = 12


def _grade_results(path: Path, scores: dict[str, float]) -> Path:
    """A results_<timestamp>.json as `agents-cli eval grade` writes it (trimmed to what it always holds)."""
    cases = [{"eval_case_id": eval_id} for eval_id in scores]
    results = [
        {
            "eval_case_index": index,
            "response_candidate_results": [
                {
                    "response_index": 0,
                    "metric_results": {"quality": {"metric_name": "quality", "score": score, "error_message": None}},
                }
            ],
        }
        for index, score in enumerate(scores.values())
    ]
    path.write_text(
        json.dumps(
            {
                "eval_case_results": results,
                "summary_metrics": [{"metric_name": "quality", "num_cases_total": len(scores)}],
                "evaluation_dataset": [{"eval_cases": cases}],
                "metadata": {"dataset": cases},
            }
        )
    )
    return path


def _scores(merge: int, drifting: bool) -> dict[str, float]:
    # 1–5 rubric scores that differ by case (4.0 … 4.6), each 0.1 lower a merge when drifting
    return {f"c{i}": round(4.0 + 0.2 * (i % 4) - (0.1 * merge if drifting else 0.0), 3) for i in range(CASES)}


@pytest.fixture
def project(tmp_path) -> Path:
    root = tmp_path / "project"
    shutil.copytree(ROOT / "examples" / "agents_cli", root, ignore=shutil.ignore_patterns("__pycache__", "baseline"))
    dataset = {"eval_cases": [{"eval_case_id": f"c{i}", "prompt": {"parts": [{"text": f"Hi {i}"}]}} for i in range(12)]}
    (root / "tests/eval/datasets/basic-dataset.json").write_text(json.dumps(dataset))
    (root / "gate.yml").write_text(
        "baseline: {store: file, path: blessed/results.json}\n"
        "gate: {fail_on: [drift], tolerance: 0.3}\n"
        "agents:\n  - name: travel_helper\n    target: {kind: adk, agent: app}\n"
        "    evalsets: [tests/eval/datasets/*-dataset.json]\n    eval_config: tests/eval/eval_config.yaml\n"
    )
    return root


def _walk(project: Path, monkeypatch, drifting: bool) -> None:
    config = project / "gate.yml"
    for merge in range(MERGES + 1):
        monkeypatch.setenv("GITHUB_SHA", SHA[merge])
        results = _grade_results(project / f"results_{merge}.json", _scores(merge, drifting))
        assert main(["baseline", "update", "--config", str(config), "--results", str(results)]) == 0
    monkeypatch.setenv("GITHUB_SHA", "f" * 40)


@pytest.mark.parametrize("drifting", [True, False], ids=["sliding", "unchanged"])
def test_agents_cli_metrics_are_recorded_trended_and_drift_on_their_own_scale(drifting, project, monkeypatch, capsys):
    _walk(project, monkeypatch, drifting)
    history = history_json((project / "blessed" / "history.db").read_bytes())
    assert history["schema_version"] == 3
    assert [r["sha"] for r in history["records"]] == SHA[: MERGES + 1]
    newest = history["records"][-1]["eval_sets"][0]
    assert newest["eval_set_id"] == "basic-dataset" and newest["criteria"]["quality"]["own_scale"] is True
    expected_mean = 4.3 - (0.1 * MERGES if drifting else 0.0)
    assert newest["criteria"]["quality"]["mean"] == pytest.approx(expected_mean)
    assert newest["cases"]["c3"]["scores"]["quality"][0] == pytest.approx(4.6 - (1.0 if drifting else 0.0))

    capsys.readouterr()
    assert main(["history", "show", "--config", str(project / "gate.yml")]) == 0
    shown = capsys.readouterr().out
    trend = next(line for line in shown.splitlines() if "travel_helper · quality" in line)
    if drifting:
        # the newest ten records (`history.trend`), 0.1 a step on a 1–5 scale: first → last on that scale
        assert "  █▇▆▆▅▄▃▃▂▁  4.200 → 3.300" in trend, trend
    else:
        spark = trend.split()[-4]
        assert len(spark) == 10 and len(set(spark)) == 1 and trend.endswith("4.300 → 4.300"), trend

    current = _grade_results(project / "results_pr.json", _scores(MERGES + 1, drifting))
    output = project / "c.json"
    code = main(["compare", "--config", str(project / "gate.yml"), "--results", str(current), "--output", str(output)])
    out = capsys.readouterr().out
    comparison = json.loads(output.read_text())
    (drift,) = comparison["history"]["drift"]
    assert drift["criterion"] == "quality" and drift["cases_compared"] == CASES
    if drifting:
        assert code == 1, out
        assert drift["verdict"] == "regressed" and drift["gating"]
        assert drift["baseline"] == pytest.approx(4.3) and drift["current"] == pytest.approx(3.2)
        assert drift["delta"] == pytest.approx(-1.1)
        (failure,) = (f["text"] for f in comparison["gate"]["failures"])
        assert failure.startswith(f"drift: travel_helper quality since {SHA[0][:12]}"), failure
        assert "dropped 1.100 (≥ tolerance 0.3)" in failure, failure
        # against its own base (one merge back) the drop is 0.1 point, below the tolerance: only drift sees it
        assert [s["verdict"] for s in comparison["summaries"]] != ["regressed"]
    else:
        assert code == 0, out
        assert drift["verdict"] == "unchanged" and comparison["gate"]["failures"] == []
