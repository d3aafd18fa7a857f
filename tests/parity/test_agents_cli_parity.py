"""Parity with Google's agents-cli 1.11 itself (`make test-agents-cli`, which installs it into
.deps/agents-cli-<version> and points AGENTS_CLI at it): on the same agent and dataset,

* `agents-cli eval grade` on the traces our run wrote gives every code metric the score we gave it (and errors
  where we errored): the SDK's instance, result rules and metric loading, end to end;
* `agents-cli eval generate` against `adk api_server` writes the traces we write: turn structure, authors, tool
  calls and responses, final responses (function-call ids, event times and the `agents` map aside: see
  docs/agents-cli.md).

Without AGENTS_CLI these tests skip and say why; ADK_EVAL_GATE_REQUIRE_AGENTS_CLI=1 (the make target) turns a
missing agents-cli into a failure.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
import requests

from tests.support.paths import ROOT

HERE = Path(__file__).parent / "agents_cli"
EXAMPLE = ROOT / "examples" / "agents_cli"
BIN = Path(sys.executable).parent


def _agents_cli() -> str:
    found = os.environ.get("AGENTS_CLI")
    if found and Path(found).is_file():
        return found
    if os.environ.get("ADK_EVAL_GATE_REQUIRE_AGENTS_CLI") == "1":
        pytest.fail(f"AGENTS_CLI={found!r} is not an agents-cli executable; run `make test-agents-cli`")
    pytest.skip("needs google-agents-cli: run `make test-agents-cli` (installs it into .deps/agents-cli-<version>)")


def _offline_env(tmp_path: Path) -> dict[str, str]:
    """agents-cli's client wants credentials even when every metric is local: a placeholder is enough."""
    credentials = tmp_path / "adc.json"
    credentials.write_text(
        json.dumps({"type": "authorized_user", "client_id": "x", "client_secret": "x", "refresh_token": "x"})
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GOOGLE_", "GEMINI_"))}
    return {**env, "GOOGLE_APPLICATION_CREDENTIALS": str(credentials), "GOOGLE_CLOUD_PROJECT": "placeholder"}


@pytest.fixture(scope="module")
def our_run(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("ours")
    done = subprocess.run(
        [str(BIN / "adk-eval-gate"), "run", "--config", str(HERE / "eval-gate.yml"), "--output", str(out / "r.json")],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert (out / "r.json").is_file(), done.stderr[-2000:]
    return out


def _theirs_graded(agents_cli: str, traces: Path, tmp_path: Path) -> dict:
    out = tmp_path / "graded"
    done = subprocess.run(
        [
            *(agents_cli, "eval", "grade", "--traces", str(traces)),
            "--config",
            str(HERE / "parity_config.yaml"),
            "--output",
            str(out),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        env=_offline_env(tmp_path),
        cwd=HERE,
    )
    files = sorted(out.glob("results_*.json"))
    assert files, done.stdout[-2000:] + done.stderr[-2000:]
    return json.loads(files[-1].read_text())


def test_agents_cli_grades_our_traces_as_we_scored_them(our_run, tmp_path):
    agents_cli = _agents_cli()
    traces = our_run / "agents-cli" / "parity" / "parity-dataset.run1.json"
    theirs = _theirs_graded(agents_cli, traces, tmp_path)
    ours = json.loads((our_run / "r.json").read_text())["eval_sets"][0]
    ids = [case.get("eval_case_id") for case in json.loads(traces.read_text())["eval_cases"]]
    compared = 0
    for result in theirs["eval_case_results"]:
        eval_id = ids[result["eval_case_index"]] or f"case_{result['eval_case_index']}"
        our_case = next(c for c in ours["cases"] if c["eval_id"] == eval_id)
        for name, their in result["response_candidate_results"][0]["metric_results"].items():
            mine = our_case["metrics"][name]
            assert (mine["status"] == "error") == (their["error_message"] is not None), (eval_id, name, mine, their)
            assert mine["score"] == their["score"], (eval_id, name)
            compared += 1
    assert compared == 5 * 9
    statuses = {name: m["status"] for name, m in ours["cases"][0]["metrics"].items()}
    assert statuses["text_result"] == statuses["no_score"] == "error" and statuses["words"] == "passed"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _normalised(case: dict) -> dict:
    """What the traces must agree on: ids of function calls are random and event times are the server's."""

    def content(value: dict) -> dict:
        parts = []
        for part in value.get("parts", []):
            part = json.loads(json.dumps(part))
            for key in ("function_call", "function_response"):
                if key in part:
                    part[key].pop("id", None)
            parts.append(part)
        return {"role": value.get("role"), "parts": parts}

    turns = case.get("agent_data", {}).get("turns", [])
    return {
        "eval_case_id": case.get("eval_case_id"),
        "responses": case.get("responses"),
        "turns": [
            (
                turn.get("turn_index"),
                turn.get("turn_id"),
                [(e["author"], content(e.get("content") or {})) for e in turn["events"]],
            )
            for turn in turns
        ],
        "rest": {k: v for k, v in case.items() if k not in ("agent_data", "responses")},
    }


def test_our_traces_are_what_eval_generate_writes(our_run, tmp_path):
    agents_cli = _agents_cli()
    port = _free_port()
    server = subprocess.Popen(
        [str(BIN / "adk"), "api_server", "--no_use_local_storage", "--port", str(port), str(EXAMPLE)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        for _ in range(240):
            try:
                if requests.get(f"http://127.0.0.1:{port}/list-apps", timeout=1).ok:
                    break
            except requests.ConnectionError:
                time.sleep(0.25)
        generated = tmp_path / "generated.json"
        done = subprocess.run(
            [
                *(agents_cli, "eval", "generate", "--url", f"http://127.0.0.1:{port}", "--app-name", "app"),
                "--dataset",
                str(HERE / "parity-dataset.json"),
                "--output",
                str(generated),
            ],
            capture_output=True,
            text=True,
            timeout=300,
            env=_offline_env(tmp_path),
            cwd=EXAMPLE,  # eval generate wants to stand in an agents-cli project (its pyproject.toml)
        )
        assert generated.is_file(), done.stdout[-2000:] + done.stderr[-2000:]
    finally:
        server.terminate()
        server.wait(timeout=30)
    theirs = json.loads(generated.read_text())["eval_cases"]
    ours = json.loads((our_run / "agents-cli" / "parity" / "parity-dataset.run1.json").read_text())["eval_cases"]
    assert [_normalised(c) for c in ours] == [_normalised(c) for c in theirs]
    assert any(
        e["content"]["parts"][0].get("function_call")
        for c in ours
        for t in c["agent_data"]["turns"]
        for e in t["events"]
    )


# agents-cli's own metric loading (`eval grade`'s prepare_eval_metrics), run in its venv: each metric's name, and
# each local code metric's score on one instance, so a key it ignores (`custom_function_name`) shows which function
# really runs.
_THEIR_METRICS = """
import json, sys
from google.agents.cli.eval.eval_utils import prepare_eval_metrics
metrics, _, _ = prepare_eval_metrics(config_path=sys.argv[1], metrics_str=None, default_config_path=sys.argv[1])
instance = json.loads(sys.argv[2])
out = []
for m in metrics:
    name = m if isinstance(m, str) else m.name
    fn = getattr(m, "custom_function", None)
    out.append([name, fn(instance) if callable(fn) else None])
print(json.dumps(out))
"""
REAL_CONFIGS = sorted((Path(__file__).parent / "real_shapes" / "agents_cli_configs").glob("*"))


@pytest.mark.parametrize("path", REAL_CONFIGS, ids=lambda p: p.name)
def test_real_eval_configs_give_agents_clis_own_metrics(path, tmp_path):
    from adk_eval_gate.evalsets.agents_cli_config import load_agents_cli_config

    python = Path(_agents_cli()).parent / "python"
    instance = {"response": {"role": "model", "parts": [{"text": "Paris is the capital."}]}}
    done = subprocess.run(
        [str(python), "-c", _THEIR_METRICS, str(path), json.dumps(instance)],
        capture_output=True,
        text=True,
        timeout=120,
        env=_offline_env(tmp_path),
    )
    assert done.returncode == 0, done.stderr[-2000:]
    theirs = json.loads(done.stdout.strip().splitlines()[-1])
    ours = load_agents_cli_config(path)
    assert [m.name for m in ours.metrics] == [name for name, _ in theirs]
    for metric, (_, score) in zip(ours.metrics, theirs, strict=True):
        if metric.kind == "code":
            namespace: dict = {}
            exec(
                compile(metric.source or "", str(path), "exec"), namespace
            )  # the corpus's own metric, as agents-cli runs it
            assert namespace["evaluate"](instance) == score, metric.name
    assert ours.warnings, f"{path.name} holds keys agents-cli ignores: each is a warning"
