"""A verdict from the evidence in hand: `run` with no baseline to extend its adaptive runs, then `compare` with a
baseline file. One case of four broken outright; the design ({2–10} runs) could confirm it, but the samples the two
files hold (2 a case) cannot: the drop is unconfirmed, fails by default and names the command that would settle it.
"""

from __future__ import annotations

import json
from pathlib import Path

from adk_eval_gate.commands.main import main

ROLL = r'r"roll an? (\d+)[ -]sided die"'
NOT_SIX = r'r"roll an? (?!6 )(\d+)[ -]sided die"'  # "Roll a 6 sided die" goes unrolled: roll_6 always fails
FOUR = ("roll_6", "roll_20", "capabilities", "dice_then_primes")


def _four_cases_no_store(example: Path) -> Path:
    evalset = example / "evals" / "dice.evalset.json"
    data = json.loads(evalset.read_text())
    data["eval_cases"] = [c for c in data["eval_cases"] if c["eval_id"] in FOUR]
    evalset.write_text(json.dumps(data))
    config = example / "eval-gate.yml"
    text = config.read_text()
    stored = "baseline: {store: file, path: baseline/results.json}"
    assert stored in text
    config.write_text(text.replace(stored, "baseline: {store: none}"))
    return config


def _break(example: Path) -> None:
    agent = example / "hello_world" / "agent.py"
    source = agent.read_text()
    assert ROLL in source
    agent.write_text(source.replace(ROLL, NOT_SIX))


def _runs(path: Path) -> list[int]:
    return [len(case["runs"]) for case in json.loads(path.read_text())["eval_sets"][0]["cases"]]


def test_run_then_compare_a_broken_case_the_samples_cannot_confirm_is_unconfirmed_and_fails(example, tmp_path, capsys):
    config = _four_cases_no_store(example)
    base, current = tmp_path / "base.json", tmp_path / "out" / "results.json"
    assert main(["run", "--config", str(config), "--output", str(base), "--quiet"]) == 0
    _break(example)
    capsys.readouterr()
    assert main(["run", "--config", str(config), "--output", str(current), "--quiet"]) == 1
    assert _runs(base) == _runs(current) == [2, 2, 2, 2]  # no baseline at run time: no case got its extra runs
    assert "adaptive runs had no baseline to decide against" in capsys.readouterr().err  # said when it happens
    capsys.readouterr()
    compared = tmp_path / "out" / "comparison.json"
    args = ["--baseline", str(base), "--results", str(current), "--output", str(compared)]
    code = main(["compare", "--config", str(config), *args])
    out = capsys.readouterr().out
    assert code == 1, out
    assert out.startswith("Gate: FAIL"), out
    assert "unconfirmed" in out and "so it does not gate" not in out
    # what would settle it, as a command line: the runs `run --baseline` adds to each case that looks worse
    assert f"adk-eval-gate run --baseline {base}" in out
    comparison = json.loads(compared.read_text())
    assert comparison["verdict"] == "fail"
    first = comparison["gate"]["failures"][0]["text"]
    assert first.startswith(
        "unconfirmed: hello_world/dice tool_trajectory_avg_score: 1 of 4 cases scored lower (roll_6)"
    )
    assert comparison["gate"]["unconfirmed"] >= 1


def test_the_same_break_with_the_runs_it_settles_on_is_a_regression(example, tmp_path, capsys):
    # the command the unconfirmed verdict names, followed: the broken case gets its extra runs and the gate confirms it
    config = _four_cases_no_store(example)
    base, current = tmp_path / "base.json", tmp_path / "out" / "results.json"
    assert main(["run", "--config", str(config), "--output", str(base), "--quiet", "--all-runs"]) == 0
    _break(example)
    assert main(["run", "--config", str(config), "--output", str(current), "--quiet", "--baseline", str(base)]) == 1
    assert _runs(current)[0] == 10
    capsys.readouterr()
    args = ["--baseline", str(base), "--results", str(current), "--output", str(tmp_path / "out" / "comparison.json")]
    code = main(["compare", "--config", str(config), *args])
    out = capsys.readouterr().out
    assert code == 1, out
    assert "first: regression: hello_world/dice tool_trajectory_avg_score: 1 of 4 cases scored lower (roll_6); " in out
    assert "dropped 0.250" in out
    assert "unconfirmed" not in out
