"""A real ADK agent that ends its own worker process on one case, run by `ci` as a user runs it: that case is an
error, the others pass, and the exit code is the gate policy's (an error fails the gate only where `fail_on`
lists it), not a failed run's."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tests.integration.targets.test_target_adk import faulty_suite


@pytest.mark.parametrize(("fail_on", "exit_code"), [("[regression, error]", 1), ("[regression]", 0)])
def test_ci_gates_a_dead_worker_as_one_errored_case(tmp_path, fail_on, exit_code):
    prompts = {"ok0": "hello", "dies": "die now", **{f"ok{i}": "hello" for i in range(1, 5)}}
    config = faulty_suite(tmp_path, prompts, run="run: {workers: 2, concurrency: 2, retries: 0}\n")
    config.write_text(f"baseline: {{store: none}}\ngate: {{fail_on: {fail_on}}}\n" + config.read_text())
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "INPUT_", "ACTIONS_"))}
    done = subprocess.run(
        [sys.executable, "-m", "adk_eval_gate", "ci", "--config", str(config), "--output-dir", str(tmp_path / "out")],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )
    assert done.returncode == exit_code, done.stderr[-3000:]
    assert "Traceback" not in done.stderr
    results = json.loads((tmp_path / "out" / "results.json").read_text())
    assert results["interrupted"] is False
    cases = {c["eval_id"]: (c["status"], c.get("reason")) for s in results["eval_sets"] for c in s["cases"]}
    assert cases.pop("dies") == ("error", "worker process died (exit code 3) while running this case")
    assert cases == {f"ok{i}": ("passed", None) for i in range(5)}
