"""adk-eval-gate's own trajectory criteria on a real run of the example agent."""

from __future__ import annotations

import json
from pathlib import Path

from adk_eval_gate.commands.main import main


def test_end_to_end_on_the_example_agent(example: Path, capsys):
    config = example / "eval-gate.yml"
    text = config.read_text().replace(
        "eval_config: evals/eval_config.json   # ADK's own file, unchanged",
        "criteria: {gate_trajectory_precision: 1.0, gate_trajectory_recall: 1.0, "
        "gate_trajectory_single_tool_use: {threshold: 0.5, tool_name: roll_die}}",
    )
    assert text != config.read_text()
    config.write_text(text)
    out = example / "results.json"
    main(["run", "--config", str(config), "--output", str(out), "--quiet"])
    results = json.loads(out.read_text())
    metrics = {name for s in results["eval_sets"] for c in s["cases"] for name in c["metrics"]}
    assert metrics == {"gate_trajectory_precision", "gate_trajectory_recall", "gate_trajectory_single_tool_use"}
    score = {
        (c["eval_id"], name): m["score"]
        for s in results["eval_sets"]
        for c in s["cases"]
        for name, m in c["metrics"].items()
    }
    # the scripted agent rolls a 12-sided die where the golden expects another: neither precise nor complete
    assert score["roll_12_wrong_golden", "gate_trajectory_precision"] == 0.0
    assert score["roll_12_wrong_golden", "gate_trajectory_recall"] == 0.0
    assert score["roll_6", "gate_trajectory_precision"] == score["roll_6", "gate_trajectory_recall"] == 1.0
    # two turns, the die rolled in the first only
    assert score["dice_then_primes", "gate_trajectory_single_tool_use"] == 0.5
    assert score["capabilities", "gate_trajectory_single_tool_use"] == 0.0
