"""`from adk_eval_gate import AgentEvaluator` in place of google-adk 2.13's: an ADK-style pytest file, its import
line swapped, gives the same verdicts and the same failure lines as ADK's own AgentEvaluator on the same agent."""

from __future__ import annotations

import asyncio
import csv
import importlib.util
import json
import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from adk_eval_gate import AgentEvaluator

ADK_IMPORT = "from google.adk.evaluation.agent_evaluator import AgentEvaluator"
OUR_IMPORT = "from adk_eval_gate import AgentEvaluator"

TEST_FILE = """
import asyncio

{import_line}


def test_passing_set():
    asyncio.run(AgentEvaluator.evaluate("hello_world", "evals/passing/dice.evalset.json", num_runs=2,
                                        print_detailed_results={details}))


def test_failing_set():
    asyncio.run(AgentEvaluator.evaluate(agent_module="hello_world",
    eval_dataset_file_path_or_dir="evals/dice.evalset.json",
                                        print_detailed_results=False))


def test_legacy_directory():
    asyncio.run(AgentEvaluator.evaluate("hello_world", "legacy", num_runs=1, print_detailed_results={details}))


def test_legacy_directory_failing():
    asyncio.run(AgentEvaluator.evaluate("hello_world", "legacy_wrong", num_runs=3, print_detailed_results={details}))
"""

LEGACY_TURNS = [
    {
        "query": "Roll a 6 sided die",
        "expected_tool_use": [{"tool_name": "roll_die", "tool_input": {"sides": 6}}],
        "reference": "I rolled a 6 sided die and got 4.",
    },
    {
        "query": "Are 13 and 17 prime?",
        "expected_tool_use": [{"tool_name": "check_prime", "tool_input": {"nums": [13, 17]}}],
        "reference": "13, 17 are prime numbers.",
    },
]
# ADK prints its detail tables with tabulate, which only google-adk's `eval` extra installs.
DETAILS = importlib.util.find_spec("tabulate") is not None
LINE = re.compile(r"^(?:E\s+)?(\S+ for hello_world (?:Failed|was not evaluated)\..*)$")


def _project(example: Path) -> Path:
    """ADK's usual pytest layout: the agent package at the root, eval files and test_config.json beside them."""
    evals = example / "evals"
    (evals / "test_config.json").write_text((evals / "eval_config.json").read_text())
    data = json.loads((evals / "dice.evalset.json").read_text())
    data["eval_cases"] = [
        c for c in data["eval_cases"] if c["eval_id"] not in {"roll_12_wrong_golden", "primes_paraphrased"}
    ]
    (evals / "passing").mkdir()
    (evals / "passing" / "dice.evalset.json").write_text(json.dumps(data))
    (evals / "passing" / "test_config.json").write_text((evals / "eval_config.json").read_text())
    for folder, turns in (
        ("legacy", LEGACY_TURNS),
        ("legacy_wrong", [{**LEGACY_TURNS[0], "reference": "Six."}]),
    ):
        (example / folder / "nested").mkdir(parents=True)
        (example / folder / "nested" / "dice.test.json").write_text(json.dumps(turns))
        (example / folder / "nested" / "notes.json").write_text("not an eval file: ADK only walks *.test.json")
        (example / folder / "nested" / "test_config.json").write_text(
            json.dumps({"criteria": {"tool_trajectory_avg_score": 1.0, "response_match_score": 0.8}})
        )
    return example


def _pytest(project: Path, import_line: str, name: str) -> dict[str, list[str] | None]:
    """Runs the test file with this import line; per test: None when it passed, else ADK's failure lines."""
    (project / "tests").mkdir(exist_ok=True)
    (project / "tests" / f"test_{name}.py").write_text(TEST_FILE.format(import_line=import_line, details=DETAILS))
    junit = project / f"{name}.xml"
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(p for p in (str(Path.cwd() / "src"), os.environ.get("PYTHONPATH")) if p),
    }
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            f"tests/test_{name}.py",
            f"--junitxml={junit}",
        ],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
    )
    assert junit.exists(), done.stdout + done.stderr
    verdicts: dict[str, list[str] | None] = {}
    for case in ET.parse(junit).getroot().iter("testcase"):
        failure = case.find("failure")
        text = None if failure is None else (failure.get("message", "") + "\n" + (failure.text or ""))
        verdicts[case.get("name")] = (
            None if text is None else sorted({m.group(1) for m in map(LINE.match, text.splitlines()) if m})
        )
    return verdicts


def test_an_adk_pytest_file_gives_the_same_verdicts_with_only_its_import_changed(example):
    project = _project(example)
    adk = _pytest(project, ADK_IMPORT, "adk")
    ours = _pytest(project, OUR_IMPORT, "ours")
    assert ours == adk
    assert adk["test_passing_set"] is None and adk["test_legacy_directory"] is None
    assert adk["test_failing_set"] == [
        "response_match_score for hello_world Failed. Expected 0.8, but got 0.3333333333333333.",
        "tool_trajectory_avg_score for hello_world Failed. Expected 1.0, but got 0.0.",
    ]
    assert adk["test_legacy_directory_failing"] == [
        "response_match_score for hello_world Failed. Expected 0.8, but got 0.0."
    ]


def test_the_assertion_shows_each_missed_turn_expected_beside_actual(example, monkeypatch):
    project = _project(example)
    monkeypatch.chdir(project)
    monkeypatch.syspath_prepend(str(project))
    with pytest.raises(AssertionError) as raised:
        asyncio.run(AgentEvaluator.evaluate("hello_world", "evals/dice.evalset.json", print_detailed_results=False))
    text = str(raised.value)
    assert text.startswith("Following are all the test failures. If you looking to get more details")
    block = text[text.index("tool_trajectory_avg_score for hello_world Failed") :].splitlines()
    assert block[1] == "  case 'roll_12_wrong_golden', turn 1, runs 1, 2 (score 0): Roll a 12 sided die"
    assert block[2:4] == [
        '    - expected tool calls: roll_die({"sides": 10})',
        '    + actual tool calls:   roll_die({"sides": 12})',
    ]
    assert "  case 'primes_paraphrased', turn 1, runs 1, 2 (score 0.3333): Are 4 and 8 prime?" in text
    assert "    + actual response:   No prime numbers found." in text


def test_detailed_results_and_csv_match_adks_columns_and_scores(example, monkeypatch, capsys, tmp_path):
    from google.adk.evaluation.agent_evaluator import AgentEvaluator as AdkAgentEvaluator

    project = _project(example)
    monkeypatch.chdir(project)
    monkeypatch.syspath_prepend(str(project))
    rows = {}
    for name, evaluator in (("adk", AdkAgentEvaluator), ("ours", AgentEvaluator)):
        with pytest.raises(AssertionError):
            asyncio.run(
                evaluator.evaluate(
                    "hello_world",
                    "evals/dice.evalset.json",
                    num_runs=1,
                    output_file=str(tmp_path / f"{name}.csv"),
                    print_detailed_results=name == "ours" or DETAILS,
                )
            )
        with (tmp_path / f"{name}.csv").open(encoding="utf-8") as handle:
            rows[name] = list(csv.DictReader(handle))
    assert list(rows["ours"][0]) == list(rows["adk"][0])

    def key(row):  # ADK's set id is a uuid for nothing here, but its rows come in completion order
        return (row["eval_id"], row["metric_name"])

    def comparable(row):
        return {
            k: row[k]
            for k in (
                "eval_id",
                "metric_name",
                "threshold",
                "score",
                "eval_status",
                "prompt",
                "expected_response",
                "actual_response",
            )
        }

    adk = sorted(
        (
            comparable(r)
            for r in rows["adk"]
            if r["metric_name"] in ("tool_trajectory_avg_score", "response_match_score")
        ),
        key=key,
    )
    ours = sorted((comparable(r) for r in rows["ours"]), key=key)
    assert ours == adk
    out = capsys.readouterr().out
    assert (
        "Summary: `EvalStatus.FAILED` for Metric: `tool_trajectory_avg_score`. Expected threshold: `1.0`, "
        "actual value: `0.0`."
    ) in out
    assert "| eval_status" in out and "expected_tool_calls" in out
    # ADK's informational efficiency metrics are printed with the rest and never fail the test.
    assert "Summary: `EvalStatus.INFORMATIONAL` for Metric: `tool_call_count_v1`. Expected threshold: `None`" in out
    assert all("_v1 for hello_world" not in line for line in out.splitlines())


def test_adks_argument_errors(example, monkeypatch, tmp_path):
    project = _project(example)
    monkeypatch.chdir(project)
    monkeypatch.syspath_prepend(str(project))
    with pytest.raises(ValueError, match="`num_runs` must be at least 1, got 0"):
        asyncio.run(AgentEvaluator.evaluate("hello_world", "evals/dice.evalset.json", num_runs=0))
    with pytest.raises(ValueError, match=r"No `\*.test.json` eval files found in evals"):
        asyncio.run(AgentEvaluator.evaluate("hello_world", "evals"))
    with pytest.raises(ValueError, match="Sub-Agent 'nobody' not found"):
        asyncio.run(AgentEvaluator.evaluate("hello_world", "evals/passing/dice.evalset.json", agent_name="nobody"))
    session = tmp_path / "session.json"
    session.write_text(json.dumps({"app_name": "hello", "user_id": "u1", "state": {"k": "v"}}))
    with pytest.raises(AssertionError, match="Initial session should be specified as a part of EvalSet file"):
        asyncio.run(
            AgentEvaluator.evaluate("hello_world", "evals/passing/dice.evalset.json", initial_session_file=str(session))
        )
    # With a pre-EvalSet file the initial session seeds every case, and the legacy criteria whitelist applies.
    asyncio.run(AgentEvaluator.evaluate("hello_world", "legacy", num_runs=1, initial_session_file=str(session)))
    (project / "legacy" / "nested" / "test_config.json").write_text(
        json.dumps({"criteria": {"hallucinations_v1": 0.5}})
    )
    with pytest.raises(ValueError, match="Invalid criteria key: hallucinations_v1"):
        asyncio.run(AgentEvaluator.evaluate("hello_world", "legacy"))


def test_a_crashing_agent_and_an_unscored_metric_fail_the_test(tmp_path, monkeypatch):
    from tests.conftest import FAULTY_AGENT

    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(FAULTY_AGENT.parent))
    (tmp_path / "crash.test.json").write_text(
        json.dumps([{"query": "please crash", "expected_tool_use": [], "reference": "x"}])
    )
    with pytest.raises(AssertionError) as raised:
        asyncio.run(AgentEvaluator.evaluate("faulty", "crash.test.json"))
    assert "crash for faulty Failed. 2 of 2 runs were recorded as failed without producing any metric results." in str(
        raised.value
    )
    assert "model exploded" in str(raised.value)
    # A two-turn legacy file with ADK's default criteria passes on an agent that echoes.
    (tmp_path / "echo.test.json").write_text(
        json.dumps(
            [
                {"query": "hello", "expected_tool_use": [], "reference": "echo: hello"},
                {"query": "again", "expected_tool_use": [], "reference": "echo: again"},
            ]
        )
    )
    asyncio.run(AgentEvaluator.evaluate("faulty", "echo.test.json", num_runs=1))
    # A metric that produced no score is a failure here (unlike `adk eval`), with the reason it could not run.
    from google.adk.evaluation.eval_set import EvalSet as AdkEvalSet

    eval_set = AdkEvalSet.model_validate(
        {
            "eval_set_id": "s",
            "eval_cases": [
                {
                    "eval_id": "c",
                    "conversation": [
                        {
                            "user_content": {"parts": [{"text": "hello"}], "role": "user"},
                            "final_response": {"parts": [{"text": "echo: hello"}]},
                        }
                    ],
                }
            ],
        }
    )
    with pytest.raises(AssertionError, match=r"response_evaluation_score for faulty was not evaluated\. .* Why: "):
        asyncio.run(
            AgentEvaluator.evaluate_eval_set(
                "faulty", eval_set, criteria={"response_evaluation_score": 0.5}, num_runs=1
            )
        )
