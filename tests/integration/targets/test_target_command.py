"""The `command` target: an executable speaking the JSON protocol, and every way such a process can fail."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from adk_eval_gate.core.errors import InputError
from adk_eval_gate.run.pipeline import run_plan
from adk_eval_gate.run.plan import build_plan
from tests.support.paths import AGENTS

AGENT = AGENTS / "command_agent.py"


def command_config(example: Path, mode: str, run: str = "") -> Path:
    shutil.copy(AGENT, example / "agent.py")
    config = example / "command.yml"
    config.write_text(
        f"{run}agents:\n  - name: cmd\n    target: "
        f"{{kind: command, command: ['{sys.executable}', ./agent.py, {mode}]}}\n"
        "    evalsets: [evals/*.evalset.json]\n    criteria: "
        "{tool_trajectory_avg_score: 1.0, response_match_score: 0.8}\n"
    )
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


def test_request_carries_the_case(example, tmp_path):
    spy = example / "spy.py"
    spy.write_text(
        f"import json, sys\nreq = json.load(sys.stdin)\nopen({str(tmp_path / 'req.json')!r}, "
        "'w').write(json.dumps(req))\n"
        "print(json.dumps({'turns': [{'response': 'x'} for _ in req['turns']]}))\n"
    )
    config = example / "spy.yml"
    config.write_text(
        f"agents:\n  - name: cmd\n    target: {{kind: command, command: ['{sys.executable}', spy.py]}}\n"
        "    evalsets: [evals/*.evalset.json]\n"
    )
    evalset = example / "evals" / "dice.evalset.json"
    data = json.loads(evalset.read_text())
    data["eval_cases"] = [c for c in data["eval_cases"] if c["eval_id"] == "dice_then_primes"]
    evalset.write_text(json.dumps(data))
    run_plan(build_plan(config), quiet=True)
    request = json.loads((tmp_path / "req.json").read_text())
    assert request["protocol"] == 1 and request["eval_id"] == "dice_then_primes" and request["run"] == 0
    assert [t["user_content"]["parts"][0]["text"] for t in request["turns"]] == [
        "Roll a 100 sided die",
        "Are 13 and 17 prime?",
    ]
    assert request["session_input"]["app_name"] == "hello_world"


def test_missing_program_is_bad_input_before_anything_runs(example):
    config = command_config(example, "turns")
    config.write_text(config.read_text().replace(sys.executable, "/nonexistent/python"))
    with pytest.raises(
        InputError, match=r"command.yml:3: agents\[0\]\.target\.command\[0\]: '/nonexistent/python' does not exist"
    ):
        build_plan(config)


def _two_cases(example: Path) -> None:
    evalset = example / "evals" / "dice.evalset.json"
    data = json.loads(evalset.read_text())
    data["eval_cases"] = data["eval_cases"][:2]
    evalset.write_text(json.dumps(data))


@pytest.mark.parametrize(
    ("mode", "reason"),
    [
        ("crash", "command exited with status -11"),
        ("huge", "stdout passed the output limit of 16 MiB (16 MiB per turn); the command was stopped"),
        ("flood", "stdout passed the output limit of 16 MiB (16 MiB per turn); the command was stopped"),
    ],
)
def test_crash_and_unbounded_output_error_only_that_agent_within_the_timeout(example, mode, reason):
    _two_cases(example)
    # stopped at the cap (the reason says so), not at the 20 s timeout
    results = run_plan(build_plan(command_config(example, mode, run="run: {timeout: 20}\n")), quiet=True)
    for case in results.eval_sets[0].cases:
        assert (case.status, case.reason) == ("error", reason)


def test_memory_stays_bounded_while_an_agent_floods_stdout(example, tmp_path):
    """The CLI, in its own process so its peak RSS is its own: 50 MB and endless output cost far less memory."""
    _two_cases(example)
    peaks = {}
    for mode in ("turns", "huge", "flood"):
        config = command_config(example, mode, run="run: {timeout: 20, concurrency: 1}\n")
        probe = (
            "import resource, sys; from adk_eval_gate.commands.main import main; code = main(sys.argv[1:]); "
            "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss); sys.exit(code)"
        )
        done = subprocess.run(
            [
                sys.executable,
                "-c",
                probe,
                "run",
                "--quiet",
                "--config",
                str(config),
                "--output",
                str(tmp_path / f"{mode}.json"),
            ],
            capture_output=True,
            text=True,
            timeout=120,
        )
        peaks[mode] = int(done.stdout.split()[-1])  # KiB
        assert (tmp_path / f"{mode}.json").exists()
    for mode in ("huge", "flood"):
        assert peaks[mode] - peaks["turns"] < 40 * 1024, peaks  # 16 MiB held at most, nowhere near 50 MB or more


def test_children_that_outlive_the_command_are_killed_and_its_answer_kept(example, tmp_path):
    _two_cases(example)
    pids = tmp_path / "pids.txt"
    config = command_config(example, f"orphan, {pids}", run="run: {timeout: 20}\n")
    results = run_plan(build_plan(config), quiet=True)
    assert [c.status for c in results.eval_sets[0].cases] == ["passed", "passed"]  # scored from the answer it gave
    for pid in map(int, pids.read_text().split()):
        deadline = time.monotonic() + 5
        while _alive(pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not _alive(pid), f"child {pid} outlived the case"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with open(f"/proc/{pid}/stat") as stat:  # a zombie (killed, not yet reaped by its init) is gone for our purpose
        return stat.read().split(")")[-1].split()[0] != "Z"


def test_output_after_closing_stdout_keeps_the_answer(example):
    _two_cases(example)
    results = run_plan(build_plan(command_config(example, "closed")), quiet=True)
    assert [c.status for c in results.eval_sets[0].cases] == ["passed", "passed"]


def test_scenario_cases_on_a_command_target_are_bad_input(example):
    config = command_config(example, "turns")
    evalset = example / "evals" / "dice.evalset.json"
    data = json.loads(evalset.read_text())
    data["eval_cases"][1] = {
        "eval_id": "talk",
        "conversation_scenario": {"starting_prompt": "hi", "conversation_plan": "roll"},
    }
    evalset.write_text(json.dumps(data))
    with pytest.raises(
        InputError, match=r"^evals/dice.evalset.json: eval_cases\[1\]\.conversation_scenario: case 'talk'"
    ):
        build_plan(config)
