"""pass^k as a gate (issue 36.4), end to end through the CLI on a replayed agent: `run` and `baseline update` on
the default branch, then a pull request's `run` and `compare`. Three reliable cases that fail every run drop the
eval set's pass^3 by 30 points: `gate.pass_k` fails the gate on it and says so; the same pull request without the
knob is not failed by pass^k; k beyond the runs is `cannot be estimated`, failing closed; a bad knob is one line,
exit 2."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from adk_eval_gate.commands.main import main
from tests.support.history_repo import _invocation, make_repo

STORE = "{store: file, path: blessed/results.json}"
RUNS = 4


def record(root: Path, broken: set[int], cases: int = 10, runs: int = RUNS) -> None:
    """The agent as committed now, one recorded file per run: the cases in `broken` fail every run."""
    actual = [{"eval_id": f"q{i}", "conversation": [_invocation(i, i not in broken)]} for i in range(cases)]
    for run in range(runs):
        text = json.dumps({"eval_set_id": "qa", "eval_cases": actual})
        (root / "recorded" / f"run{run}.evalset.json").write_text(text)


def _repo(tmp_path: Path, gate: str) -> Path:
    config = make_repo(tmp_path / "repo", STORE, cases=10, extra=f"gate: {gate}\n")
    text = config.read_text().replace("    criteria:", f"    num_runs: {RUNS}\n    criteria:")
    text = text.replace("actuals: recorded/actuals.evalset.json", "actuals: [recorded/run*.evalset.json]")
    (config.parent / "recorded" / "actuals.evalset.json").unlink()
    config.write_text(text)
    record(config.parent, set())
    return config


def _pull_request(config: Path, tmp_path: Path, broken: set[int]) -> tuple[int, dict]:
    main(["run", "--config", str(config), "--output", str(tmp_path / "base.json"), "--quiet"])
    assert main(["baseline", "update", "--config", str(config), "--results", str(tmp_path / "base.json")]) == 0
    record(config.parent, broken)
    main(["run", "--config", str(config), "--output", str(tmp_path / "pr.json"), "--quiet"])
    out = tmp_path / "comparison.json"
    code = main(["compare", "--config", str(config), "--results", str(tmp_path / "pr.json"), "--output", str(out)])
    return code, json.loads(out.read_text())


def test_a_drop_in_pass_k_fails_the_gate_and_says_so(tmp_path, capsys):
    config = _repo(tmp_path, "{fail_on: [error], pass_k: {k: 3, tolerance: 0.1}}")
    code, comparison = _pull_request(config, tmp_path, {0, 1, 2})
    assert "  qa/qa pass^3: DROPPED  pass^3 1.00 → 0.70 (-0.30) over 10 case(s)" in capsys.readouterr().out
    (row,) = comparison["pass_k"]
    assert row["baseline"] == 1.0 and row["current"] == pytest.approx(0.7) and row["k"] == 3
    assert row["verdict"] == "dropped" and row["gating"] and row["p_value"] < 0.01
    assert row["current_interval"][0] < 0.7 < row["current_interval"][1]
    assert code == 1 and comparison["verdict"] == "fail"
    line = next(f["text"] for f in comparison["gate"]["failures"] if f["kind"] == "pass_k")
    assert line.startswith("pass^k: qa/qa pass^3 1.00 → 0.70 (-0.30) over 10 case(s), p = "), line
    # `ci` outside Actions reaches the same verdict, and its comment shows the pass^k table
    out = tmp_path / "local"
    assert main(["ci", "--config", str(config), "--output-dir", str(out), "--quiet"]) == 1
    comment = (out / "report.md").read_text()
    assert "**Reliability: pass^3**" in comment
    assert "| qa / qa | 1.000 | 0.700 [" in comment and "🔴 dropped (gating): pass^3 1.00 → 0.70" in comment
    # the history kept each case's tally: `history show` gives the default branch's pass^3 and its interval
    capsys.readouterr()
    assert main(["history", "show", "--config", str(config)]) == 0
    shown = capsys.readouterr().out
    assert "  pass^k per eval set, k=3 (gate.pass_k); 95% interval over cases; newest first:" in shown
    assert "    qa/qa: unknown 1.00 [0.72, 1.00]" in shown  # ten cases that passed every run: Wilson's interval


def test_without_the_knob_pass_k_does_not_gate(tmp_path):
    config = _repo(tmp_path, "{fail_on: [error]}")
    code, comparison = _pull_request(config, tmp_path, {0, 1, 2})
    assert code == 0 and comparison["pass_k"] == []


def test_k_beyond_the_runs_cannot_be_estimated_and_fails_closed(tmp_path):
    config = _repo(tmp_path, "{fail_on: [error], pass_k: {k: 5}}")
    code, comparison = _pull_request(config, tmp_path, set())
    (row,) = comparison["pass_k"]
    assert row["verdict"] == "not_estimable" and row["current"] is None and row["gating"]
    assert "cannot be estimated: the baseline has fewer than k=5 runs of q0" in row["reason"]
    assert code == 1


@pytest.mark.parametrize(
    ("knob", "expected"), [("{k: 0}", "gate.pass_k.k"), ("{k: 3, tolerance: 2}", "gate.pass_k.tolerance")]
)
def test_a_bad_knob_is_one_line_and_exit_2(knob, expected, tmp_path, capsys):
    config = _repo(tmp_path, f"{{pass_k: {knob}}}")
    assert main(["validate", "--config", str(config)]) == 2
    err = capsys.readouterr().err.strip()
    assert expected in err and len(err.splitlines()) == 1, err
