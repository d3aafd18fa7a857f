"""agents-cli projects end to end, offline: the bundled example through every target, repeated and adaptive runs,
its traces replayed, and agents-cli's own results files gated and stored as a baseline."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
import requests

from adk_eval_gate.commands.main import main
from adk_eval_gate.run.adaptive import Decider
from adk_eval_gate.run.pipeline import run_plan
from adk_eval_gate.run.plan import build_plan
from tests.support.paths import ROOT

EXAMPLE = ROOT / "examples" / "agents_cli"
DATASET = "tests/eval/datasets/*-dataset.json"
CONFIG = "tests/eval/eval_config.yaml"
THRESHOLDS = "    thresholds: {matches_reference: 0.8, used_expected_tool: 1.0}\n"


@pytest.fixture
def project(tmp_path) -> Path:
    root = tmp_path / "project"
    shutil.copytree(EXAMPLE, root, ignore=shutil.ignore_patterns("__pycache__", "baseline"))
    return root


def _config(root: Path, target: str, extra: str = "", top: str = "") -> Path:
    path = root / f"{abs(hash(target + top))}.yml"
    path.write_text(
        f"{top}baseline: {{store: none}}\nagents:\n  - name: travel_helper\n"
        f"    target: {target}\n    evalsets: [{DATASET}]\n    eval_config: {CONFIG}\n{THRESHOLDS}{extra}"
    )
    return path


def _scores(results) -> dict:
    return {c.eval_id: {n: m.score for n, m in c.metrics.items()} for c in results.eval_sets[0].cases}


def _texts(results) -> dict:
    return {
        c.eval_id: c.runs[0].actual_invocations[0]["final_response"]["parts"][0]["text"]
        for c in results.eval_sets[0].cases
    }


@pytest.fixture
def served(project):
    """`adk api_server` on the project's folder, as `agents-cli eval generate` boots it."""
    port = __import__("socket").create_server(("127.0.0.1", 0)).getsockname()[1]
    server = subprocess.Popen(
        [
            str(Path(sys.executable).parent / "adk"),
            "api_server",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            str(project),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={**os.environ, "ADK_DISABLE_LOAD_DOTENV": "1"},
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        try:
            if requests.get(f"{url}/list-apps", timeout=1).ok:
                break
        except requests.RequestException:
            time.sleep(0.3)
    yield url
    server.terminate()
    server.wait(timeout=30)


COMMAND_AGENT = """\
import json, sys
request = json.load(sys.stdin)
history = request.get("history", [])
said = [e["content"]["parts"][0]["text"] for e in history if e.get("content")]
turns = [{"response": f"history={len(history)} " + " | ".join(said) + " -> " + t["user_content"]["parts"][0]["text"]}
         for t in request["turns"]]
print(json.dumps({"turns": turns}))
"""


def test_both_shapes_run_alike_in_process_and_over_http(project, served):
    in_process = run_plan(build_plan(_config(project, "{kind: adk, agent: app}")), quiet=True)
    over_http = run_plan(build_plan(_config(project, f"{{kind: http, url: '{served}', app_name: app}}")), quiet=True)
    assert _scores(in_process) == _scores(over_http)
    assert _texts(in_process) == _texts(over_http)
    # Shape B: "And in Paris?" only means the weather because the history was seeded before the turn
    assert _texts(over_http)["weather_follow_up"] == "The weather in Paris is sunny, 22 C."
    assert in_process.summary.passed == 4


def test_worker_processes_seed_the_history_too(project):
    results = run_plan(build_plan(_config(project, "{kind: adk, agent: app}", top="run: {workers: 2}\n")), quiet=True)
    assert _texts(results)["weather_follow_up"] == "The weather in Paris is sunny, 22 C."


def test_the_command_target_gets_the_history(project):
    (project / "agent.py").write_text(COMMAND_AGENT)
    results = run_plan(
        build_plan(_config(project, f"{{kind: command, command: ['{sys.executable}', agent.py]}}")), quiet=True
    )
    texts = _texts(results)
    assert texts["weather_follow_up"] == (
        "history=2 What's the weather like in Tokyo? | The weather in Tokyo is rainy, 19 C. -> And in Paris?"
    )
    assert texts["greeting"].startswith("history=0  -> Hello")


def test_repeated_runs_write_one_trace_file_per_run_and_replay_reproduces_them(project, capsys):
    config = _config(project, "{kind: adk, agent: app}", "    num_runs: 3\n")
    assert main(["run", "--config", str(config), "--output", str(project / "out" / "results.json"), "--quiet"]) == 0
    traces = sorted((project / "out" / "agents-cli" / "travel_helper").glob("*.json"))
    assert [t.name for t in traces] == [f"basic-dataset.run{k}.json" for k in (1, 2, 3)]
    results = json.loads((project / "out" / "results.json").read_text())
    assert all(len(c["runs"]) == 3 for c in results["eval_sets"][0]["cases"])
    replayed = run_plan(build_plan(_config(project, f"{{kind: replay, actuals: ['{traces[0]}']}}")), quiet=True)
    scores = {
        c["eval_id"]: {n: m["runs"][0]["score"] for n, m in c["metrics"].items()}
        for c in results["eval_sets"][0]["cases"]
    }
    assert _scores(replayed) == scores


def test_adaptive_runs_as_for_adk_eval_sets(project):
    config = _config(project, "{kind: adk, agent: app}", "    num_runs: {min: 2, max: 4}\n")
    plan = build_plan(config)
    baseline = run_plan(plan, quiet=True)  # a push run: every run
    assert {len(c.runs) for c in baseline.eval_sets[0].cases} == {4}
    current = run_plan(plan, quiet=True, decider=Decider(baseline))  # a pull request: the same scores, decided early
    assert current.eval_sets[0].adaptive_runs.model_dump() == {"min": 2, "max": 4}
    assert {len(c.runs) for c in current.eval_sets[0].cases} == {2}
    assert all(c.sampling.extra is None for c in current.eval_sets[0].cases)


def _agents_cli_results(path: Path, scores: dict[str, float | None]) -> Path:
    """A results_<timestamp>.json as `agents-cli eval grade` writes it (trimmed to what it always holds)."""
    cases = [{"eval_case_id": eval_id} for eval_id in scores]
    results = [
        {
            "eval_case_index": index,
            "response_candidate_results": [
                {
                    "response_index": 0,
                    "metric_results": {
                        "quality": {
                            "metric_name": "quality",
                            "score": score,
                            "explanation": None,
                            "error_message": None if score is not None else "CustomFunctionError(evaluate): judge down",
                        }
                    },
                }
            ],
        }
        for index, score in enumerate(scores.values())
    ]
    path.write_text(
        json.dumps(
            {
                "eval_case_results": results,
                "summary_metrics": [{"metric_name": "quality", "num_cases_total": len(scores)}],
                "win_rates": None,
                "evaluation_dataset": [{"eval_cases": cases}],
                "metadata": {"candidate_names": None, "dataset_name": None, "dataset": cases},
                "agent_info": None,
            }
        )
    )
    return path


def test_agents_cli_results_are_gated_and_stored_as_a_baseline(project, capsys):
    twelve = {"eval_cases": [{"eval_case_id": f"c{i}", "prompt": {"parts": [{"text": f"Hi {i}"}]}} for i in range(12)]}
    (project / "tests/eval/datasets/basic-dataset.json").write_text(json.dumps(twelve))
    config = project / "gate.yml"
    config.write_text(
        "baseline: {store: file, path: baseline/results.json}\ngate: {fail_on: [regression, error], tolerance: 0.05}\n"
        f"agents:\n  - name: travel_helper\n    target: {{kind: adk, agent: app}}\n    evalsets: [{DATASET}]\n"
        f"    eval_config: {CONFIG}\n"
    )
    good = _agents_cli_results(project / "results_1.json", {f"c{i}": 4.5 for i in range(12)})
    assert main(["baseline", "update", "--config", str(config), "--results", str(good)]) == 0
    stored = json.loads((project / "baseline" / "results.json").read_text())
    assert stored["schema_version"] == 1 and stored["eval_sets"][0]["shape"] == "agents_cli"

    same = _agents_cli_results(project / "results_2.json", {f"c{i}": 4.5 for i in range(12)})
    assert main(["compare", "--config", str(config), "--results", str(same), "--output", str(project / "c.json")]) == 0

    worse = _agents_cli_results(project / "results_3.json", {f"c{i}": 2.0 for i in range(12)})
    capsys.readouterr()
    assert main(["compare", "--config", str(config), "--results", str(worse), "--output", str(project / "c.json")]) == 1
    out = capsys.readouterr().out
    assert "regression: travel_helper/basic-dataset quality: 12 of 12 cases scored lower" in out
    assert "dropped 2.500" in out

    broken = _agents_cli_results(project / "results_4.json", {**{f"c{i}": 4.5 for i in range(11)}, "c11": None})
    assert (
        main(["compare", "--config", str(config), "--results", str(broken), "--output", str(project / "c.json")]) == 1
    )
    assert "c11" in capsys.readouterr().out


def test_a_damaged_agents_cli_results_file_is_one_line(project, capsys):
    path = project / "results_x.json"
    path.write_text(json.dumps({"eval_case_results": [{"eval_case_index": "first"}]}))
    assert main(["compare", "--results", str(path), "--baseline", str(path), "--output", str(project / "c.json")]) == 2
    err = capsys.readouterr().err.strip()
    assert re.search(r"results_x\.json(:\d+)?: eval_case_results\[0\]\.eval_case_index", err), err
    assert len(err.splitlines()) == 1


def test_our_agents_cli_results_keep_their_scale_but_not_infinity(project, capsys):
    config = _config(project, "{kind: adk, agent: app}")
    out = project / "out" / "results.json"
    assert main(["run", "--config", str(config), "--output", str(out), "--quiet"]) == 0
    data = json.loads(out.read_text())
    metric = data["eval_sets"][0]["cases"][0]["metrics"]["response_length"]
    assert metric["score"] > 1  # a word count: read back as it is
    compare = ["compare", "--results", str(out), "--baseline", str(out), "--output", str(project / "c.json")]
    assert main(compare) == 0
    metric["score"] = float("inf")
    out.write_text(json.dumps(data))
    capsys.readouterr()
    assert main(compare) == 2
    assert "metrics.response_length.score: inf is not a finite number" in capsys.readouterr().err


def test_the_bundled_example_passes_against_its_committed_baseline(tmp_path, capsys):
    root = tmp_path / "example"
    shutil.copytree(EXAMPLE, root, ignore=shutil.ignore_patterns("__pycache__", ".adk"))
    out = root / "out" / "results.json"
    assert main(["run", "--config", str(root / "eval-gate.yml"), "--output", str(out), "--quiet"]) == 0
    capsys.readouterr()
    assert (
        main(
            [
                "compare",
                "--config",
                str(root / "eval-gate.yml"),
                "--results",
                str(out),
                "--output",
                str(root / "c.json"),
            ]
        )
        == 0
    )
    comparison = json.loads((root / "c.json").read_text())
    assert comparison["verdict"] == "pass"
    assert "not comparable" not in capsys.readouterr().out  # the committed case hashes still match the dataset


def test_an_agents_cli_drop_on_its_own_scale_that_these_samples_cannot_confirm_is_unconfirmed(project, capsys):
    # quality is scored 1–5: three of twelve cases fall from 4.5 to 0.5, a mean drop of 1.0 point. Weighed as if a
    # case moved at most 1, that drop would touch all twelve (a drop this design confirms, so "noise" and a pass);
    # on the metric's own scale it touches three, fewer than 12 cases × 1 run can confirm: unconfirmed, failing.
    twelve = {"eval_cases": [{"eval_case_id": f"c{i}", "prompt": {"parts": [{"text": f"Hi {i}"}]}} for i in range(12)]}
    (project / "tests/eval/datasets/basic-dataset.json").write_text(json.dumps(twelve))
    config = project / "gate.yml"
    config.write_text(
        "baseline: {store: file, path: baseline/results.json}\ngate: {fail_on: [regression, error], tolerance: 0.05}\n"
        f"agents:\n  - name: travel_helper\n    target: {{kind: adk, agent: app}}\n    evalsets: [{DATASET}]\n"
        f"    eval_config: {CONFIG}\n"
    )
    good = _agents_cli_results(project / "results_1.json", {f"c{i}": 4.5 for i in range(12)})
    assert main(["baseline", "update", "--config", str(config), "--results", str(good)]) == 0
    worse = _agents_cli_results(project / "results_2.json", {f"c{i}": 0.5 if i < 3 else 4.5 for i in range(12)})
    capsys.readouterr()
    code = main(["compare", "--config", str(config), "--results", str(worse), "--output", str(project / "c.json")])
    out = capsys.readouterr().out
    assert code == 1, out
    assert "unconfirmed: travel_helper/basic-dataset quality: 3 of 12 cases scored lower" in out
    assert "the drop touches at least 3 cases" in out
