"""A local baseline as a first-class path: `baseline update` never writes nothing and exits 0, never stores a
baseline at fewer runs than the range's max without being asked, says what it stored; `ci` and `run` name a local
baseline file without editing the config, and a path that does not exist is bad input."""

from __future__ import annotations

import json
from pathlib import Path

from adk_eval_gate.commands.main import main
from tests.e2e.test_evidence_in_hand import _break, _four_cases_no_store, _runs


def _artifact_store(example: Path) -> Path:
    config = example / "eval-gate.yml"
    text = config.read_text()
    stored = "baseline: {store: file, path: baseline/results.json}"
    config.write_text(text.replace(stored, "baseline: {store: artifact, name: adk-eval-gate-results}"))
    return config


def test_baseline_update_on_the_artifact_store_says_it_cannot_write_and_exits_2(example, tmp_path, capsys):
    config = _artifact_store(example)
    results = example / "baseline" / "results.json"  # a full run at num_runs' max
    assert main(["baseline", "update", "--config", str(config), "--results", str(results)]) == 2
    err = capsys.readouterr().err
    assert "baseline.store: is artifact, which nothing here can write" in err and "--baseline FILE" in err
    # the same results, written to a local file the command names, holding what it says it holds
    local = tmp_path / "local" / "base.json"
    local.parent.mkdir()
    args = ["--results", str(results), "--baseline", str(local)]
    assert main(["baseline", "update", "--config", str(config), *args]) == 0
    out = capsys.readouterr().out
    assert f"baseline updated: {local}" in out
    assert "hello_world/dice: 6 cases × 10 run(s) a case" in out
    assert "power, hello_world: dice: 6 cases × {2–10} runs → confirms a drop of 1 case" in out
    assert _runs(local) == [10] * 6


def test_baseline_update_refuses_results_at_the_range_min_unless_asked(example, tmp_path, capsys):
    config = _four_cases_no_store(example)
    few = tmp_path / "few.json"
    assert main(["run", "--config", str(config), "--output", str(few), "--quiet"]) == 0
    assert _runs(few) == [2, 2, 2, 2]
    local = tmp_path / "base.json"
    update = ["baseline", "update", "--config", str(config), "--results", str(few), "--baseline", str(local)]
    capsys.readouterr()
    assert main(update) == 2
    err = capsys.readouterr().err
    assert "holds 2 run(s) a case for hello_world/dice, fewer than num_runs' max 10" in err
    assert f"adk-eval-gate run --all-runs --output {few}" in err and "--allow-few-runs" in err
    assert not local.exists()
    assert main([*update, "--allow-few-runs"]) == 0
    captured = capsys.readouterr()
    assert "hello_world/dice: 4 cases × 2 run(s) a case" in captured.out
    assert "baseline 2" in captured.out  # the power it gives is that of the runs it holds
    assert "fewer than num_runs' max 10" in captured.err
    assert local.exists()


def test_ci_names_a_local_baseline_and_a_missing_one_is_bad_input(example, tmp_path, capsys):
    config = _four_cases_no_store(example)
    base = tmp_path / "base.json"
    assert main(["run", "--config", str(config), "--output", str(base), "--quiet", "--all-runs"]) == 0
    out = tmp_path / "out"
    ci = ["ci", "--config", str(config), "--output-dir", str(out), "--quiet"]
    assert main([*ci, "--baseline", str(tmp_path / "typo.json")]) == 2
    assert "--baseline: no results file at" in capsys.readouterr().err
    assert main(["run", "--config", str(config), "--baseline", str(tmp_path / "typo.json")]) == 2
    _break(example)
    assert main([*ci, "--baseline", str(base)]) == 1
    comparison = json.loads((out / "comparison.json").read_text())
    assert comparison["baseline"]["source"] == str(base)
    assert comparison["gate"]["failures"][0]["text"].startswith(
        "regression: hello_world/dice tool_trajectory_avg_score"
    )
    assert _runs(out / "results.json")[0] == 10  # decided against that baseline: the broken case got its runs
