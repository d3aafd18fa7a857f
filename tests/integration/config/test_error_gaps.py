"""Bad input is one line that names the line, lists every problem (up to a limit) and suggests the near miss."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from adk_eval_gate.commands.main import main


@pytest.mark.parametrize(
    ("edit", "said"),
    [
        (("evals/*.evalset.json", "eval/*.evalset.json"), "did you mean 'evals/*.evalset.json'?"),
        (("evals/*.evalset.json", "evals/*.evalsets.json"), "did you mean 'evals/*.evalset.json'?"),
        (("agent: hello_world", "agent: helo_world"), "did you mean 'hello_world'?"),
        (("evals/eval_config.json", "evals/eval-config.json"), "did you mean 'evals/eval_config.json'?"),
    ],
)
def test_a_path_that_names_nothing_suggests_the_near_miss(example: Path, capsys, edit, said) -> None:
    config = example / "eval-gate.yml"
    text = config.read_text()
    assert edit[0] in text
    config.write_text(text.replace(edit[0], edit[1]))
    assert main(["validate", "--config", str(config)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and said in err[0], err


def test_an_eval_config_json_error_names_its_line_and_a_word_is_not_quoted_text(example: Path, capsys) -> None:
    (example / "evals" / "eval_config.json").write_text(
        '{\n  "criteria": {\n    "tool_trajectory_avg_score": 1.0,\n    "response_match_score": "high"\n  }\n}\n'
    )
    assert main(["validate", "--config", str(example / "eval-gate.yml")]) == 2
    line = capsys.readouterr().err.strip()
    assert "evals/eval_config.json:4: criteria.response_match_score" in line
    assert "'high' is a word, not a number" in line and "without quotes" not in line


def test_every_problem_in_an_eval_set_is_listed_with_its_line(example: Path, capsys) -> None:
    path = example / "evals" / "dice.evalset.json"
    data = json.loads(path.read_text())
    data["eval_cases"][1]["conversation"][0]["user_content"]["parts"] = 5
    data["eval_cases"][2]["conversation"][0]["bogus"] = 1
    data["eval_cases"][3]["eval_id"] = 7
    path.write_text(json.dumps(data, indent=2))
    assert main(["validate", "--config", str(example / "eval-gate.yml")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1
    line, lines = err[0], path.read_text().splitlines()
    assert "eval_cases[2].conversation[0].bogus: is not a known field (and 2 more problems: " in line
    parts_line = next(i for i, text in enumerate(lines, 1) if '"parts": 5' in text)
    id_line = next(i for i, text in enumerate(lines, 1) if '"eval_id": 7' in text)
    bogus_line = next(i for i, text in enumerate(lines, 1) if '"bogus": 1' in text)
    assert f"dice.evalset.json:{bogus_line}:" in line
    assert f"eval_cases[1].conversation[0].user_content.parts (line {parts_line}): expected a list" in line
    assert f"eval_cases[3].eval_id (line {id_line}): 7 is not a string" in line
