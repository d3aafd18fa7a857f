"""The same deterministic agent through `adk eval` (run here, live), our `adk` target and our `http` target:
identical per-case scores and statuses."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from adk_eval_gate.run.pipeline import run_plan
from adk_eval_gate.run.plan import build_plan
from tests.integration.targets.test_target_http import http_config


def run_adk_eval(example: Path) -> dict[str, tuple[str, dict[str, float]]]:
    adk = Path(sys.executable).parent / "adk"
    env = {**os.environ, "ADK_DISABLE_LOAD_DOTENV": "1"}
    done = subprocess.run(
        [str(adk), "eval", "hello_world", "evals/dice.evalset.json", "--config_file_path", "evals/eval_config.json"],
        cwd=example,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 1, done.stderr[-2000:]  # 2.13 exits 1 when a case fails; two do here
    (history,) = (example / "hello_world" / ".adk" / "eval_history").glob("*.evalset_result.json")
    data = json.loads(history.read_text())
    status_names = {1: "passed", 2: "failed", 3: "not_evaluated"}
    return {
        c["eval_id"]: (
            status_names[c["final_eval_status"]],
            {m["metric_name"]: m["score"] for m in c["overall_eval_metric_results"] if m["threshold"] is not None},
        )
        for c in data["eval_case_results"]
    }


def ours(results) -> dict[str, tuple[str, dict[str, float]]]:
    return {c.eval_id: (c.status, {n: m.score for n, m in c.metrics.items()}) for c in results.eval_sets[0].cases}


def test_adk_eval_adk_target_and_http_target_agree(example, api_server):
    adk_eval = run_adk_eval(example)
    in_process = ours(run_plan(build_plan(example / "eval-gate.yml"), quiet=True))
    over_http = ours(run_plan(build_plan(http_config(example, api_server)), quiet=True))
    assert in_process == adk_eval
    assert over_http == adk_eval
    assert sorted(status for status, _ in adk_eval.values()) == [
        "failed",
        "failed",
        "passed",
        "passed",
        "passed",
        "passed",
    ]
