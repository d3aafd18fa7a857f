"""The `adk` target on google-adk's real Runner with scripted offline models, and its failure isolation."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from adk_eval_gate.commands.main import main
from adk_eval_gate.core.errors import InputError
from adk_eval_gate.run.pipeline import run_plan
from adk_eval_gate.run.plan import build_plan
from tests.conftest import FAULTY_AGENT


def faulty_suite(tmp_path: Path, prompts: dict[str, str], run: str = "", state: dict | None = None) -> Path:
    shutil.copytree(FAULTY_AGENT, tmp_path / "faulty", ignore=shutil.ignore_patterns("__pycache__"))
    cases = [
        {
            "eval_id": eval_id,
            "conversation": [
                {
                    "user_content": {"role": "user", "parts": [{"text": prompt}]},
                    "final_response": {"role": "model", "parts": [{"text": f"echo: {prompt}"}]},
                }
            ],
            "session_input": {"app_name": "faulty", "user_id": "u", "state": state or {}},
        }
        for eval_id, prompt in prompts.items()
    ]
    (tmp_path / "s.evalset.json").write_text(json.dumps({"eval_set_id": "s", "eval_cases": cases}))
    config = tmp_path / "gate.yml"
    config.write_text(
        f"{run}agents:\n  - name: faulty\n    target: {{kind: adk, agent: faulty}}\n"
        "    evalsets: [s.evalset.json]\n    criteria: {response_match_score: 0.5}\n"
    )
    return config


def statuses(results) -> dict[str, tuple[str, str | None]]:
    return {c.eval_id: (c.status, c.reason) for s in results.eval_sets for c in s.cases}


def test_example_through_adk_target_matches_recorded_adk_eval(example):
    results = run_plan(build_plan(example / "eval-gate.yml"), quiet=True)
    history = json.loads((example / "recorded" / "dice.evalset_result.json").read_text())
    adk_scores = {
        c["eval_id"]: {
            m["metric_name"]: m["score"] for m in c["overall_eval_metric_results"] if m["threshold"] is not None
        }
        for c in history["eval_case_results"]
    }
    ours = {c.eval_id: {n: m.score for n, m in c.metrics.items()} for c in results.eval_sets[0].cases}
    assert ours == adk_scores
    case = next(c for c in results.eval_sets[0].cases if c.eval_id == "dice_then_primes")
    invocation = case.runs[0].actual_invocations[1]
    assert invocation["final_response"]["parts"][0]["text"] == "13, 17 are prime numbers."
    assert invocation["app_details"]["agent_details"]["hello_world"]["instructions"].startswith("You roll dice")
    assert invocation["duration"] >= 0


def test_agent_that_raises_or_hangs_is_an_error_and_the_rest_are_scored(tmp_path):
    config = faulty_suite(
        tmp_path,
        {"ok": "hello", "boom": "please crash", "stuck": "please hang", "ok2": "bye"},
        run="run: {timeout: 2, retries: 1}\n",
    )
    results = run_plan(build_plan(config), quiet=True)
    got = statuses(results)
    assert got["ok"] == ("passed", None) and got["ok2"][0] == "passed"
    assert got["boom"] == ("error", "RuntimeError: model exploded")
    assert got["stuck"] == ("error", "timed out after 2s")


def test_transient_model_error_is_retried(tmp_path, monkeypatch):
    monkeypatch.setenv("FLAKY_KEY", str(tmp_path))
    config = faulty_suite(tmp_path, {"flaky": "be flaky"}, run="run: {retries: 1}\n")
    got = statuses(run_plan(build_plan(config), quiet=True))
    assert got["flaky"] == ("passed", None)  # the first call got a 503; the retry ran and was scored


def test_transient_errors_exhausting_retries_say_so(tmp_path, monkeypatch):
    monkeypatch.setenv("FLAKY_KEY", str(tmp_path))
    config = faulty_suite(tmp_path, {"flaky": "be flaky"}, run="run: {retries: 0}\n")
    status, reason = statuses(run_plan(build_plan(config), quiet=True))["flaky"]
    assert status == "error" and "503" in reason and "after 1 attempts" in reason


def test_session_state_is_seeded_from_session_input(tmp_path):
    config = faulty_suite(tmp_path, {"name": "what is my name"}, state={"name": "Ada"})
    results = run_plan(build_plan(config), quiet=True)
    invocation = results.eval_sets[0].cases[0].runs[0].actual_invocations[0]
    assert invocation["final_response"]["parts"][0]["text"] == "Your name is Ada."
    calls = [
        p["function_call"]["name"]
        for e in invocation["intermediate_data"]["invocation_events"]
        for p in (e.get("content") or {}).get("parts", [])
        if "function_call" in p
    ]
    assert calls == ["get_name"]


def test_module_attribute_reference_and_dotenv(tmp_path, monkeypatch):
    config = faulty_suite(tmp_path, {"ok": "hello"})
    (tmp_path / "faulty" / ".env").write_text(
        "ADK_EVAL_GATE_TEST_DOTENV=from-dotenv\nHOME_SHOULD_STAY=changed\nGOOGLE_CLOUD_LOCATION=from-dotenv\n"
        "HTTPS_PROXY=http://127.0.0.1:9\n"
    )
    monkeypatch.setenv("HOME_SHOULD_STAY", "kept")
    for name in ("ADK_EVAL_GATE_TEST_DOTENV", "GOOGLE_CLOUD_LOCATION", "HTTPS_PROXY", "https_proxy"):
        monkeypatch.setenv(name, "")  # recorded, so whatever the run sets is removed after the test
        monkeypatch.delenv(name)
    assert statuses(run_plan(build_plan(config), quiet=True))["ok"][0] == "passed"
    import os

    # The agent runs in the host's workers, which load its `.env`; the run's own process (the judges) takes from it
    # the model credentials only, never a proxy or anything else (issue 34).
    assert os.environ["GOOGLE_CLOUD_LOCATION"] == "from-dotenv" and os.environ["HOME_SHOULD_STAY"] == "kept"
    assert "ADK_EVAL_GATE_TEST_DOTENV" not in os.environ and "HTTPS_PROXY" not in os.environ
    monkeypatch.syspath_prepend(str(tmp_path))
    config.write_text(config.read_text().replace("agent: faulty}", "agent: 'faulty.agent:root_agent'}"))
    assert statuses(run_plan(build_plan(config), quiet=True))["ok"][0] == "passed"


def test_agent_that_fails_to_import_is_a_clear_input_error(tmp_path, capsys):
    config = faulty_suite(tmp_path, {"ok": "hello"})
    (tmp_path / "faulty" / "agent.py").write_text("raise ImportError('no module named secret_sauce')\n")
    assert main(["validate", "--config", str(config)]) == 2
    err = capsys.readouterr().err
    assert "importing the agent failed: ImportError: no module named secret_sauce" in err and len(err.splitlines()) == 1


def test_missing_agent_folder_is_named(tmp_path, capsys):
    config = faulty_suite(tmp_path, {"ok": "hello"})
    config.write_text(config.read_text().replace("agent: faulty}", "agent: nowhere}"))
    assert main(["validate", "--config", str(config)]) == 2
    assert "agents[0].target.agent: 'nowhere' does not exist" in capsys.readouterr().err


def test_missing_google_adk_names_the_extra(monkeypatch):
    import importlib.util

    from adk_eval_gate.targets import adk_runtime

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "google.adk" else real(name, *a))
    with pytest.raises(InputError) as error:
        adk_runtime.require_adk()
    assert "pip install 'adk-eval-gate[adk]'" in error.value.render()
