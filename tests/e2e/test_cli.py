"""The CLI as users call it: validate, run, exit codes, the printed table, path resolution."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from adk_eval_gate import __version__
from adk_eval_gate.commands.main import main


def test_validate_reports_each_eval_set_and_exits_0(example, capsys):
    assert main(["validate", "--config", str(example / "eval-gate.yml")]) == 0
    out = capsys.readouterr().out
    assert "hello_world: 1 eval set(s), 6 case(s), target adk" in out
    assert "criteria (evals/eval_config.json): tool_trajectory_avg_score, response_match_score" in out
    assert out.strip().endswith("OK")


def test_run_prints_table_and_exits_1_when_a_case_fails(example, tmp_path, capsys):
    out = tmp_path / "results.json"
    assert main(["run", "--config", str(example / "eval-gate.yml"), "--output", str(out)]) == 1
    text = capsys.readouterr().out
    assert "roll_12_wrong_golden  FAIL" in text and "tool_trajectory_avg_score 0 < 1" in text
    assert "primes_paraphrased    FAIL" in text
    assert "Total: 4/6 cases passed, 2 failed" in text
    assert out.exists()


def test_run_exits_0_when_every_case_passes(example, tmp_path):
    evalset = example / "evals" / "dice.evalset.json"
    data = json.loads(evalset.read_text())
    data["eval_cases"] = [
        c for c in data["eval_cases"] if c["eval_id"] not in {"roll_12_wrong_golden", "primes_paraphrased"}
    ]
    evalset.write_text(json.dumps(data))
    assert (
        main(["run", "--config", str(example / "eval-gate.yml"), "--output", str(tmp_path / "r.json"), "--quiet"]) == 0
    )


def test_relative_paths_resolve_against_the_config_not_the_cwd(example, tmp_path):
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "adk_eval_gate",
            "run",
            "--config",
            str(example / "eval-gate.yml"),
            "--output",
            "r.json",
            "--quiet",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ},
    )
    assert done.returncode == 1, done.stderr
    assert json.loads((tmp_path / "r.json").read_text())["summary"]["passed"] == 4


def test_defaults_apply_without_any_criteria(example, tmp_path):
    config = example / "eval-gate.yml"
    config.write_text(
        config.read_text().replace("    eval_config: evals/eval_config.json   # ADK's own file, unchanged\n", "")
    )
    out = tmp_path / "r.json"
    main(["run", "--config", str(config), "--output", str(out), "--quiet"])
    eval_set = json.loads(out.read_text())["eval_sets"][0]
    assert eval_set["criteria_source"] == "default"
    assert {k: v["threshold"] for k, v in eval_set["criteria"].items()} == {
        "tool_trajectory_avg_score": 1.0,
        "response_match_score": 0.8,
    }
    assert eval_set["criteria"]["tool_trajectory_avg_score"]["options"]["match_type"] == "EXACT"


def test_inline_criteria_override_and_globs(example, tmp_path):
    config = example / "eval-gate.yml"
    text = config.read_text().replace(
        "    eval_config: evals/eval_config.json   # ADK's own file, unchanged\n",
        "    criteria: {tool_trajectory_avg_score: {threshold: 1.0, match_type: ANY_ORDER, ignore_args: true}}\n",
    )
    config.write_text(text.replace("[evals/*.evalset.json]", "['**/dice.evalset.json']"))
    out = tmp_path / "r.json"
    main(["run", "--config", str(config), "--output", str(out), "--quiet"])
    data = json.loads(out.read_text())
    assert data["eval_sets"][0]["criteria_source"] == "inline"
    assert data["summary"]["passed"] == 6  # with args ignored, roll_die(sides=12) matches roll_die(sides=10)


def test_version_flag(capsys):
    try:
        main(["--version"])
    except SystemExit as exc:
        assert exc.code == 0
    assert f"adk-eval-gate {__version__}" in capsys.readouterr().out
