"""docs/try-it-offline.md's record-once path, as written: `run` records, a replay config scores the recording with
no agent (and no key), and the scores are the recorded run's, case by case."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from adk_eval_gate.commands.main import main
from tests.conftest import ROOT

DOC = ROOT / "docs" / "try-it-offline.md"


def _scores(results: Path) -> dict[tuple[str, str], float | None]:
    data = json.loads(results.read_text())
    return {
        (case["eval_id"], name): metric.get("score")
        for eval_set in data["eval_sets"]
        for case in eval_set["cases"]
        for name, metric in case["metrics"].items()
    }


def test_record_once_then_replay_offline(example: Path, monkeypatch) -> None:
    text = DOC.read_text()
    assert "target: {kind: replay, actuals: recorded/results.json}" in text  # the doc shows what this test runs
    monkeypatch.chdir(example)
    assert main(["run", "--quiet"]) in (0, 1)  # the "key available" run: the example's scripted model
    (example / "recorded").mkdir(exist_ok=True)
    shutil.copy(example / "adk-eval-gate-out" / "results.json", example / "recorded" / "results.json")
    (example / "eval-gate.replay.yml").write_text(
        "agents:\n"
        "  - name: hello_world\n"
        "    target: {kind: replay, actuals: recorded/results.json}\n"
        "    evalsets: [evals/*.evalset.json]\n"
        "    eval_config: evals/eval_config.json\n"
    )
    (example / "hello_world").rename(example / "agent-gone")  # replay must not need the agent at all
    code = main(["ci", "--config", "eval-gate.replay.yml", "--no-comment", "--output-dir", "replayed"])
    assert code in (0, 1)
    assert _scores(example / "replayed" / "results.json") == _scores(example / "recorded" / "results.json")
    assert (example / "replayed" / "report.html").is_file() and (example / "replayed" / "report.md").is_file()
