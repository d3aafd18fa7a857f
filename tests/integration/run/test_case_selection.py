"""`--cases` on a real run: only the chosen cases are scored, and a partial run is never a baseline."""

from __future__ import annotations

import json

from adk_eval_gate.commands.main import main


def test_run_with_cases_scores_only_those_and_unknown_exits_2(example, tmp_path, capsys):
    out = tmp_path / "r.json"
    assert (
        main(
            [
                "run",
                "--config",
                str(example / "eval-gate.yml"),
                "--output",
                str(out),
                "--quiet",
                "--cases",
                "dice:roll_6,capabilities",
            ]
        )
        == 0
    )
    cases = json.loads(out.read_text())["eval_sets"][0]["cases"]
    assert [c["eval_id"] for c in cases] == ["roll_6", "capabilities"]
    capsys.readouterr()
    assert (
        main(
            [
                "run",
                "--config",
                str(example / "eval-gate.yml"),
                "--output",
                str(out),
                "--quiet",
                "--cases",
                "dice:roll_7",
            ]
        )
        == 2
    )
    err = capsys.readouterr().err
    assert "roll_7" in err and "did you mean 'roll_6'?" in err and len(err.strip().splitlines()) == 1


def test_baseline_update_refuses_the_results_of_a_selected_run(example, tmp_path, capsys):
    partial, full = tmp_path / "partial.json", tmp_path / "full.json"
    config = str(example / "eval-gate.yml")
    main(["run", "--config", config, "--output", str(partial), "--quiet", "--cases", "dice:roll_6"])
    baseline = example / "baseline" / "results.json"
    before = baseline.read_bytes()
    capsys.readouterr()
    assert main(["baseline", "update", "--config", config, "--results", str(partial)]) == 2
    err = capsys.readouterr().err
    assert "covers 1 of the suite's 6 cases" in err and "is not a baseline" in err
    assert baseline.read_bytes() == before
    main(["run", "--config", config, "--output", str(full), "--quiet", "--all-runs"])  # a baseline: at the max
    assert main(["baseline", "update", "--config", config, "--results", str(full)]) == 0
    assert baseline.read_bytes() != before
