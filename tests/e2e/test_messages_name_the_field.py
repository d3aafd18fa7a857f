"""One-line errors name what the user wrote: the misspelt option (before any "required" complaint), the legacy
file's own field names, the key of a per-criterion tolerance; and never suggest the field that is already there.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.hostile import assert_bad_input


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["validate", "--confg", "x"], "unknown option --confg; did you mean --config?"),
        (["validate", "--confg=x"], "unknown option --confg; did you mean --config?"),
        (["run", "--config", "x", "--ouptut", "r.json"], "unknown option --ouptut; did you mean --output?"),
        (["ci", "--no-coment", "--config", "x"], "unknown option --no-coment; did you mean --no-comment?"),
        (["compare", "--baseine", "b.json"], "unknown option --baseine; did you mean --baseline?"),
        (["--verison"], "unknown option --verison; did you mean --version?"),
        (["validate", "--zzzz"], "unknown option --zzzz"),
        (["valdate", "--config", "x"], "invalid choice: 'valdate'"),
    ],
)
def test_an_unknown_option_is_named_with_a_did_you_mean_before_anything_required(tmp_path, capsys, argv, expected):
    line = assert_bad_input(argv, tmp_path, capsys, expected, "--help")
    assert "required" not in line


def test_a_misspelt_command_gets_a_did_you_mean(tmp_path, capsys):
    assert_bad_input(["valdate", "--config", "x"], tmp_path, capsys, "did you mean validate?")


def test_prefixes_and_negative_numbers_are_still_argparses(tmp_path, capsys):
    """argparse takes a unique prefix (`--conf` for --config); that is not an unknown option."""
    line = assert_bad_input(["validate", "--conf"], tmp_path, capsys, "--config: expected one argument")
    assert "unknown option" not in line


@pytest.fixture
def legacy(example: Path, monkeypatch) -> Path:
    monkeypatch.chdir(example)
    config = example / "legacy.yml"
    config.write_text(
        "agents:\n  - name: a\n    target: {kind: replay, actuals: recorded/dice.evalset_result.json}\n"
        "    evalsets: [evals/old.test.json]\n    criteria: {tool_trajectory_avg_score: 1.0}\n"
    )
    return config


def write_turn(example: Path, **turn) -> None:
    (example / "evals" / "old.test.json").write_text(json.dumps([{"query": "roll", "reference": "5", **turn}]))


@pytest.mark.parametrize(
    ("turn", "field", "problem"),
    [
        (
            {"expected_tool_use": [{"tool_name": "roll", "tool_input": [6]}]},
            ".tool_input: ",
            "must be an object",
        ),
        ({"expected_tool_use": [{"tool_name": "roll", "tool_input": "6"}]}, ".tool_input: ", "got a string"),
        ({"expected_tool_use": [{"tool_name": 5, "tool_input": {}}]}, ".tool_name: ", "is not a tool name"),
        ({"expected_tool_use": [{"tool_name": "", "tool_input": {}}]}, ".tool_name: ", "is not a tool name"),
        ({"expected_intermediate_agent_responses": {"author": "a"}}, "responses: ", "must be a list"),
        (
            {"expected_intermediate_agent_responses": [{"author": "a", "text": 5}]},
            "[0].text: ",
            "is not a string",
        ),
        (
            {"expected_intermediate_agent_responses": [{"author": 5, "text": "t"}]},
            "[0].author: ",
            "is not a string",
        ),
    ],
)
def test_a_legacy_test_file_is_told_in_its_own_field_names(legacy, capsys, turn, field, problem):
    write_turn(legacy.parent, **turn)
    line = assert_bad_input(
        ["validate", "--config", "legacy.yml"], legacy.parent, capsys, "evals/old.test.json:1: [0]"
    )  # one-line JSON: its line
    assert field in line and problem in line
    for internal in (".args", ".name:", "intermediate_responses[", "FunctionCall"):
        assert internal not in line


def test_tool_call_args_that_are_a_list_say_args_must_be_an_object(example, capsys, monkeypatch):
    monkeypatch.chdir(example)
    path = example / "evals" / "dice.evalset.json"
    data = json.loads(path.read_text())
    data["eval_cases"][0]["conversation"][0]["intermediate_data"]["tool_uses"][0]["args"] = [6]
    path.write_text(json.dumps(data))
    line = assert_bad_input(
        ["validate", "--config", "replay.yml"],
        example,
        capsys,
        "intermediate_data.tool_uses[0].args: expected an object, got a list",
    )
    assert "not a known field" not in line and "more problem" not in line


def test_a_key_of_one_form_beside_another_forms_never_suggests_itself(example, capsys, monkeypatch):
    monkeypatch.chdir(example)
    path = example / "evals" / "dice.evalset.json"
    data = json.loads(path.read_text())
    data["eval_cases"][0]["conversation"][0]["intermediate_data"] = {"tool_uses": [], "invocation_events": []}
    path.write_text(json.dumps(data))
    line = assert_bad_input(["validate", "--config", "replay.yml"], example, capsys, "intermediate_data.")
    for key in ("tool_uses", "invocation_events"):
        assert f"{key}: is not a known field; did you mean `{key}`?" not in line


def test_a_misspelt_trajectory_key_still_gets_its_did_you_mean(example, capsys, monkeypatch):
    monkeypatch.chdir(example)
    path = example / "evals" / "dice.evalset.json"
    data = json.loads(path.read_text())
    data["eval_cases"][0]["conversation"][0]["intermediate_data"] = {"tool_usez": []}
    path.write_text(json.dumps(data))
    assert_bad_input(
        ["validate", "--config", "replay.yml"],
        example,
        capsys,
        "intermediate_data.tool_usez: is not a known field; did you mean `tool_uses`?",
    )


@pytest.mark.parametrize(
    ("tolerance", "expected"),
    [
        ("{response_match_score: -0.1}", "gate.tolerance: response_match_score: -0.1 is outside [0, 1]"),
        ("{default: 0.05, tool_trajectory_avg_score: 1.5}", "tool_trajectory_avg_score: 1.5 is outside"),
        ("-0.2", "gate.tolerance: -0.2 is outside [0, 1]"),
    ],
)
def test_a_tolerance_out_of_range_names_its_key(example, capsys, monkeypatch, tolerance, expected):
    monkeypatch.chdir(example)
    config = example / "eval-gate.yml"
    config.write_text(config.read_text().replace("gate:\n", f"gate:\n  tolerance: {tolerance}\n", 1))
    assert_bad_input(["validate", "--config", "eval-gate.yml"], example, capsys, expected, "eval-gate.yml:")


def test_a_misspelt_camel_case_aliased_key_is_one_problem_not_two(example, capsys, monkeypatch):
    """`code_confg` is a typo of `code_config` (alias `codeConfig`): the missing field is the same mistake."""
    monkeypatch.chdir(example)
    config = {"criteria": {"m": 0.5}, "custom_metrics": {"m": {"code_confg": {"name": "x.y"}}}}
    (example / "evals" / "eval_config.json").write_text(json.dumps(config))
    line = assert_bad_input(
        ["validate", "--config", "replay.yml"],
        example,
        capsys,
        "code_confg: is not a known field; did you mean",
    )
    assert "more problem" not in line
