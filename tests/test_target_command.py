"""The `command` target: an executable speaking the JSON protocol, and every way such a process can fail."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

from adk_eval_gate.pipeline import run_plan
from adk_eval_gate.plan import build_plan

AGENT = Path(__file__).parent / "agents" / "command_agent.py"


def command_config(example: Path, mode: str, run: str = "") -> Path:
    shutil.copy(AGENT, example / "agent.py")
    config = example / "command.yml"
    config.write_text(f"{run}agents:\n  - name: cmd\n    target: {{kind: command, command: ['{sys.executable}', ./agent.py, {mode}]}}\n"
                      "    evalsets: [evals/*.evalset.json]\n    criteria: {tool_trajectory_avg_score: 1.0, response_match_score: 0.8}\n")
    return config


@pytest.mark.parametrize("mode", ["turns", "events"])
def test_protocol_outputs_are_scored(example, mode):
    results = run_plan(build_plan(command_config(example, mode)), quiet=True)
    cases = {c.eval_id: c for c in results.eval_sets[0].cases}
    assert cases["roll_6"].status == "passed"
    assert cases["roll_6"].metrics["tool_trajectory_avg_score"].score == 1.0
    assert cases["roll_12_wrong_golden"].metrics["tool_trajectory_avg_score"].score == 0.0
    assert cases["capabilities"].status == "passed"
    assert cases["dice_then_primes"].metrics["tool_trajectory_avg_score"].score == 0.5  # it cannot check primes


@pytest.mark.parametrize(
    ("mode", "reason"),
    [
        ("garbage", "stdout is not JSON: 'Traceback (most recent call last): this is not JSON'"),
        ("exit3", "command exited with status 3: fatal: model quota exhausted"),
        ("error", "the command reported: the agent refused"),
        ("hang", "timed out after 1.5s"),
    ],
)
def test_misbehaving_command_is_an_error_with_one_line_reason(example, mode, reason):
    evalset = example / "evals" / "dice.evalset.json"
    data = json.loads(evalset.read_text())
    data["eval_cases"] = data["eval_cases"][:2]
    evalset.write_text(json.dumps(data))
    results = run_plan(build_plan(command_config(example, mode, run="run: {timeout: 1.5}\n")), quiet=True)
    for case in results.eval_sets[0].cases:
        assert (case.status, case.reason) == ("error", reason)
    assert results.timings.inference_seconds < 6  # hung processes were killed at the timeout, concurrently


def test_request_carries_the_case(example, tmp_path):
    spy = example / "spy.py"
    spy.write_text(f"import json, sys\nreq = json.load(sys.stdin)\nopen({str(tmp_path / 'req.json')!r}, 'w').write(json.dumps(req))\n"
                   "print(json.dumps({'turns': [{'response': 'x'} for _ in req['turns']]}))\n")
    config = example / "spy.yml"
    config.write_text(f"agents:\n  - name: cmd\n    target: {{kind: command, command: ['{sys.executable}', spy.py]}}\n"
                      "    evalsets: [evals/*.evalset.json]\n")
    evalset = example / "evals" / "dice.evalset.json"
    data = json.loads(evalset.read_text())
    data["eval_cases"] = [c for c in data["eval_cases"] if c["eval_id"] == "dice_then_primes"]
    evalset.write_text(json.dumps(data))
    run_plan(build_plan(config), quiet=True)
    request = json.loads((tmp_path / "req.json").read_text())
    assert request["protocol"] == 1 and request["eval_id"] == "dice_then_primes" and request["run"] == 0
    assert [t["user_content"]["parts"][0]["text"] for t in request["turns"]] == ["Roll a 100 sided die", "Are 13 and 17 prime?"]
    assert request["session_input"]["app_name"] == "hello_world"


def test_missing_program_is_an_error(example):
    config = command_config(example, "turns")
    config.write_text(config.read_text().replace(sys.executable, "/nonexistent/python"))
    results = run_plan(build_plan(config), quiet=True)
    assert results.eval_sets[0].cases[0].reason.startswith("cannot start /nonexistent/python")
