"""`goldens update` on an intended change to a real agent (the example's, scripted offline): a renamed tool, an
added argument and reworded answers fail the eval files of every format; the update rewrites exactly the changed
values, google-adk's own loaders read every rewritten file, untouched cases keep their bytes, and the rewritten
files score 1.0 against the runs they came from (our scorer, through a full `run`)."""

from __future__ import annotations

import json
from pathlib import Path

import yaml
from google.adk.evaluation.agent_evaluator import AgentEvaluator
from google.adk.evaluation.eval_config import EvalConfig
from google.adk.evaluation.eval_set import EvalSet as AdkEvalSet
from google.adk.evaluation.local_eval_sets_manager import load_eval_set_from_file

from adk_eval_gate.commands.main import main
from adk_eval_gate.evalsets.agents_cli_models import AgentsCliDataset
from adk_eval_gate.evalsets.json_spans import parse_spans
from adk_eval_gate.results.results_format import ResultsFile


def _turn(query: str, tool: list[dict], reference: str) -> dict:
    return {"query": query, "expected_tool_use": tool, "reference": reference}


ROLL_6 = _turn(
    "Roll a 6 sided die", [{"tool_name": "roll_die", "tool_input": {"sides": 6}}], "I rolled a 6 sided die and got 5."
)
ABOUT = _turn("What can you do?", [], "I can roll dice and check whether numbers are prime.")


def _files(evals: Path) -> None:
    """The same expectations in the other formats, each written in its own style (indentation, compactness)."""
    (evals / "named.test.json").write_text(
        json.dumps([{"name": "roll", "data": [ROLL_6]}, {"name": "about", "data": [ABOUT]}], indent=4) + "\n"
    )
    flat = [
        _turn(
            "Please roll a 20-sided die for me",
            [{"tool_name": "roll_die", "tool_input": {"sides": 20}}],
            "I rolled a 20 sided die and got 5.",
        )
    ]
    (evals / "flat.test.json").write_text(json.dumps(flat, indent="\t"))  # tabs, and no newline at the end
    lines = [
        '{"eval_cases": [',
        '  {"eval_case_id": "roll", "prompt": {"role": "user", "parts": [{"text": "Roll a 6 sided die"}]},'
        ' "reference": {"response": {"role": "model", "parts": [{"text": "I rolled a 6 sided die and got 5."}]}}},',
        '  {"eval_case_id": "about", "prompt": {"role": "user", "parts": [{"text": "What can you do?"}]},'
        ' "reference": {"response": {"role": "model", "parts": [{"text": '
        '"I can roll dice and check whether numbers are prime."}]}}}',
        "]}",
    ]
    (evals / "basic-dataset.json").write_text("\r\n".join(lines) + "\r\n")  # Windows line ends


def _change_the_agent(example: Path) -> None:
    """The intended change: roll_die is now throw_die, takes a count, and answers in other words."""
    agent = example / "hello_world" / "agent.py"
    source = agent.read_text()
    for old, new in (
        ('args={"sides": int(match.group(1))}', 'args={"sides": int(match.group(1)), "count": 1}'),
        ("def roll_die(sides: int) -> int:", "def roll_die(sides: int, count: int = 1) -> int:"),
        ('f"I rolled a {sides} sided die and got {value}."', 'f"Rolled a d{sides}: {value}."'),
        ("roll_die", "throw_die"),
    ):
        assert old in source, old
        source = source.replace(old, new)
    agent.write_text(source)


def _config(example: Path) -> Path:
    agent = {"target": {"kind": "adk", "agent": "hello_world"}, "eval_config": "evals/eval_config.json", "num_runs": 2}
    config = {
        "baseline": {"store": "file", "path": "baseline/results.json"},
        "agents": [
            {"name": "adk", **agent, "evalsets": ["evals/dice.evalset.json", "evals/*.test.json"]},
            {"name": "cli", **agent, "evalsets": ["evals/basic-dataset.json"]},
        ],
    }
    path = example / "gate.yml"
    path.write_text(yaml.safe_dump(config))
    return path


def _run(config: Path, out: Path) -> ResultsFile:
    main(["run", "--config", str(config), "--output", str(out), "--quiet"])
    return ResultsFile.model_validate_json(out.read_text())


def _case_spans(path: Path) -> dict[str, bytes]:
    """Each case's exact bytes, by id (a flat legacy file is its one case)."""
    raw = path.read_bytes()
    text = raw.decode()
    data = json.loads(text)
    root = parse_spans(text)
    if isinstance(data, list) and data and "query" in data[0]:
        return {"<file>": raw}
    items = root.items if isinstance(data, list) else next(m.value for m in root.members if m.key == "eval_cases").items
    cases = data if isinstance(data, list) else data["eval_cases"]
    ids = [c.get("eval_id") or c.get("eval_case_id") or c.get("name") for c in cases]
    return {i: text[n.start : n.end].encode() for i, n in zip(ids, items, strict=True)}


def _adk_loads(path: Path) -> None:
    criteria = {"tool_trajectory_avg_score": 1.0, "response_match_score": 0.8}
    if path.name.endswith(".evalset.json"):
        AdkEvalSet.model_validate_json(path.read_text())
    elif path.name == "flat.test.json":
        AgentEvaluator._load_eval_set_from_file(str(path), EvalConfig(criteria=criteria), {})
    elif path.name.endswith(".test.json"):
        load_eval_set_from_file(str(path), "named")
    else:
        AgentsCliDataset.model_validate_json(path.read_text())  # the SDK's own schema, mirrored


def test_an_intended_change_is_taken_into_every_format_and_scores_one(example, tmp_path, capsys):
    evals = example / "evals"
    _files(evals)
    config = _config(example)
    _change_the_agent(example)
    before = {p.name: _case_spans(p) for p in evals.glob("*.json") if p.name != "eval_config.json"}
    failing = _run(config, tmp_path / "before.json")
    assert failing.summary.failed >= 6

    capsys.readouterr()
    results = str(tmp_path / "before.json")
    assert main(["goldens", "update", "--config", str(config), "--results", results, "--all"]) == 0
    dry = capsys.readouterr()
    assert "\n+++ " in dry.out and "\n@@ -" in dry.out and "dry run: nothing written" in dry.err
    assert {p.name: _case_spans(p) for p in evals.glob("*.json") if p.name != "eval_config.json"} == before

    assert main(["goldens", "update", "--config", str(config), "--results", results, "--all", "--write"]) == 0
    err = capsys.readouterr().err
    assert "updated dice:roll_6 (2 of 2 runs agreed)" in err and "already expected: dice:capabilities" in err
    for name, spans in before.items():
        now = _case_spans(evals / name)
        changed = {i for i in spans if spans[i] != now[i]}
        untouched = {"about", "capabilities"} & set(spans)
        assert changed and not changed & untouched, name  # every file changed, never a case the change left alone
        _adk_loads(evals / name)
    assert (evals / "basic-dataset.json").read_bytes().count(b"\n") == (
        evals / "basic-dataset.json"
    ).read_bytes().count(b"\r\n")
    assert not (evals / "flat.test.json").read_text().endswith("\n")
    named = (evals / "named.test.json").read_text()
    assert '"tool_name": "throw_die",\n                        "tool_input": {\n' in named  # 4 spaces, as written

    green = _run(config, tmp_path / "after.json")
    assert green.summary.failed == 0 and green.summary.error == 0 and green.summary.passed == green.summary.total
    scores = [m.score for s in green.eval_sets for c in s.cases for m in c.metrics.values()]
    assert scores and all(score == 1.0 for score in scores)


def test_runs_that_disagree_are_listed_not_rewritten(example, tmp_path, capsys):
    _files(example / "evals")
    config = _config(example)
    results = _run(config, tmp_path / "results.json")
    data = results.model_dump(mode="json")
    case = next(
        c for s in data["eval_sets"] if s["eval_set_id"] == "dice" for c in s["cases"] if c["eval_id"] == "roll_6"
    )
    case["runs"][1]["actual_invocations"][0]["final_response"]["parts"][0]["text"] = "something else"
    case["runs"][0]["actual_invocations"][0]["final_response"]["parts"][0]["text"] = "and another"
    (tmp_path / "split.json").write_text(json.dumps(data))
    dice = (example / "evals" / "dice.evalset.json").read_bytes()
    code = main(
        [
            "goldens",
            "update",
            "--config",
            str(config),
            "--results",
            str(tmp_path / "split.json"),
            "--case",
            "dice:roll_6",
            "--write",
        ]
    )
    err = capsys.readouterr().err
    assert code == 1
    assert "left as it is: dice:roll_6: runs disagree: 1 of 2 took one trajectory" in err
    assert (example / "evals" / "dice.evalset.json").read_bytes() == dice


def test_an_eval_file_named_through_a_link_or_outside_the_config_folder_is_refused(example, tmp_path, capsys):
    config = example / "eval-gate.yml"
    results = _run(config, tmp_path / "results.json")
    (example / "elsewhere").mkdir()
    (example / "evals" / "dice.evalset.json").rename(example / "elsewhere" / "real.json")
    (example / "evals" / "dice.evalset.json").symlink_to(example / "elsewhere" / "real.json")
    before = (example / "elsewhere" / "real.json").read_bytes()
    args = ["goldens", "update", "--config", str(config), "--results", str(tmp_path / "results.json"), "--all"]
    capsys.readouterr()
    assert main([*args, "--write"]) == 2
    assert "is a symbolic link" in capsys.readouterr().err
    assert (example / "elsewhere" / "real.json").read_bytes() == before
    outside = results.model_copy(deep=True)
    outside.eval_sets[0].file = "../../outside.evalset.json"
    (tmp_path / "outside.json").write_text(outside.model_dump_json())
    assert main([*args[:-3], "--results", str(tmp_path / "outside.json"), "--all"]) == 2
    assert "is outside" in capsys.readouterr().err
