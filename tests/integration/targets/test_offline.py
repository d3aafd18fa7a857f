"""`--offline` on a real ADK agent whose model is Gemini, with no key and no network: the model is played from the
eval set's expected turns, the tools really run, scores are computed, broken wiring fails; a results file made so
never meets a real baseline; `validate` says what a run will need; an endpoint that is not there fails in seconds."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from adk_eval_gate.config.offline import OFFLINE_LABEL
from adk_eval_gate.report.html import embedded_data
from tests.support.adk_required import adk
from tests.support.fake_gemini import FakeGemini

adk("agents")  # google-adk is optional: without it these skip, saying why (or fail where it is promised)

AGENT = '''
import json, os
from google.adk.agents import LlmAgent


def add_to_cart(item: str, quantity: int) -> dict:
    """Adds an item to the cart."""
    with open(os.environ["SHOP_TOOL_LOG"], "a") as log:  # the side effect the test reads
        log.write(json.dumps({"item": item, "quantity": quantity}) + "\\n")
    return {"status": "ok", "item": item, "quantity": int(quantity)}


def cart_total() -> dict:
    """The cart's total."""
    return {"total": 42}


cart = LlmAgent(name="cart", model="gemini-2.5-flash", instruction="You manage the cart.", tools=[add_to_cart])
root_agent = LlmAgent(
    name="shop", model="gemini-2.5-flash", instruction="Route to cart.", tools=[cart_total], sub_agents=[cart]
)
'''


def _turn(text: str, answer: str, calls: list[tuple[str, dict]]) -> dict:
    return {
        "user_content": {"role": "user", "parts": [{"text": text}]},
        "final_response": {"role": "model", "parts": [{"text": answer}]},
        "intermediate_data": {"tool_uses": [{"name": name, "args": args} for name, args in calls]},
    }


EVALSET = {
    "eval_set_id": "shop",
    "eval_cases": [
        {
            "eval_id": "buy",
            "conversation": [
                _turn(
                    "add 2 apples",
                    "Added 2 apples.",
                    [("transfer_to_agent", {"agent_name": "cart"}), ("add_to_cart", {"item": "apple", "quantity": 2})],
                ),
            ],
        },
        {
            "eval_id": "total",
            "conversation": [
                _turn("hi", "Hello! What would you like?", []),
                _turn("what is my total?", "Your total is 42.", [("cart_total", {})]),
            ],
        },
    ],
}


@pytest.fixture
def shop(tmp_path: Path) -> Path:
    (tmp_path / "shop").mkdir()
    (tmp_path / "shop" / "__init__.py").write_text("from . import agent\n")
    (tmp_path / "shop" / "agent.py").write_text(AGENT)
    (tmp_path / "shop.evalset.json").write_text(json.dumps(EVALSET))
    (tmp_path / "eval-gate.yml").write_text(
        "baseline: {store: file, path: baseline/results.json}\n"
        "agents:\n  - name: shop\n    target: {kind: adk, agent: shop}\n    evalsets: [shop.evalset.json]\n"
    )
    return tmp_path


def _cli(folder: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "INPUT_", "GOOGLE_", "GEMINI_"))}
    base = {k: v for k, v in base.items() if k.lower() not in ("https_proxy", "http_proxy", "all_proxy")}
    base["SHOP_TOOL_LOG"] = str(folder / "tool.log")
    return subprocess.run(
        [sys.executable, "-m", "adk_eval_gate", *args],
        cwd=folder,
        env={**base, **env},
        capture_output=True,
        text=True,
        timeout=300,
    )


def _scores(results: dict) -> dict[str, dict[str, float]]:
    return {
        case["eval_id"]: {name: metric["score"] for name, metric in case["metrics"].items()}
        for eval_set in results["eval_sets"]
        for case in eval_set["cases"]
    }


def test_ci_offline_runs_the_real_tools_and_scores_with_no_key(shop: Path) -> None:
    done = _cli(shop, "ci", "--offline", "--no-comment", "--output-dir", "out")
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert done.stderr.startswith(OFFLINE_LABEL)  # said first, before anything runs
    # the tool ran for real, inside the sub-agent the played transfer reached, with the expected arguments
    logged = [json.loads(line) for line in (shop / "tool.log").read_text().splitlines()]
    assert logged == [{"item": "apple", "quantity": 2}]
    results = json.loads((shop / "out" / "results.json").read_text())
    assert results["offline"] == OFFLINE_LABEL
    assert _scores(results) == {
        "buy": {"tool_trajectory_avg_score": 1.0, "response_match_score": 1.0},
        "total": {"tool_trajectory_avg_score": 1.0, "response_match_score": 1.0},
    }
    assert OFFLINE_LABEL in (shop / "out" / "report.md").read_text()
    page = embedded_data((shop / "out" / "report.html").read_text())
    assert page["verdict"]["warnings"][0] == OFFLINE_LABEL
    assert f"adk-eval-gate: {OFFLINE_LABEL}" in done.stdout.splitlines()
    # nothing was compared with, or stored as, the config's file baseline
    assert not (shop / "baseline").exists()
    assert "Traceback" not in done.stderr


def test_a_renamed_tool_fails_the_offline_run(shop: Path) -> None:
    agent = shop / "shop" / "agent.py"
    agent.write_text(agent.read_text().replace("add_to_cart", "add_item"))
    done = _cli(shop, "ci", "--offline", "--no-comment", "--output-dir", "out")
    assert done.returncode == 1, done.stdout[-2000:] + done.stderr[-2000:]
    assert not (shop / "tool.log").exists()  # the agent has no add_to_cart: nothing was added
    results = json.loads((shop / "out" / "results.json").read_text())
    assert _scores(results)["buy"]["tool_trajectory_avg_score"] == 0.0
    assert _scores(results)["total"]["tool_trajectory_avg_score"] == 1.0
    assert done.stdout.strip().splitlines()[-1].startswith("adk-eval-gate: offline: FAIL — 1 case(s) failed")


def test_run_offline_then_offline_results_never_meet_a_real_baseline(shop: Path, tmp_path: Path) -> None:
    done = _cli(shop, "run", "--offline", "--output", "out/results.json")
    assert done.returncode == 0, done.stderr[-2000:]
    offline = shop / "out" / "results.json"
    refused = _cli(shop, "baseline", "update", "--results", str(offline))
    assert refused.returncode == 2 and "made with --offline" in refused.stderr, refused.stderr
    assert not (shop / "baseline" / "results.json").exists()
    real = json.loads(offline.read_text())
    del real["offline"]
    (shop / "real.json").write_text(json.dumps(real))
    mixed = _cli(shop, "compare", "--results", str(offline), "--baseline", "real.json", "--output", "c.json")
    assert mixed.returncode == 2 and "not comparable" in mixed.stderr, mixed.stderr
    assert len(mixed.stderr.strip().splitlines()) == 1
    both = _cli(shop, "compare", "--results", str(offline), "--baseline", str(offline), "--output", "c.json")
    assert both.returncode == 0, both.stderr


def test_validate_says_what_a_run_needs_and_ci_stops_with_one_line(shop: Path) -> None:
    checked = _cli(shop, "validate")
    assert checked.returncode == 0, checked.stderr
    assert (
        "note: shop: the run will need GOOGLE_API_KEY (or GOOGLE_GENAI_USE_VERTEXAI=TRUE with GOOGLE_CLOUD_PROJECT) "
        "for model gemini-2.5-flash; without it: adk-eval-gate ci --offline"
    ) in checked.stdout
    stopped = _cli(shop, "ci", "--no-comment", "--output-dir", "out")
    assert stopped.returncode == 2
    lines = stopped.stderr.strip().splitlines()
    assert len(lines) == 1 and "adk-eval-gate ci --offline" in lines[0], lines


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])  # closed once the block ends: connecting is refused


@pytest.mark.parametrize(
    "env",
    [
        pytest.param({"GOOGLE_GEMINI_BASE_URL": "http://127.0.0.1:{port}"}, id="refused"),
        pytest.param({"GOOGLE_GEMINI_BASE_URL": "https://no-such-host.invalid"}, id="unresolvable"),
        pytest.param({"https_proxy": "http://127.0.0.1:{port}", "HTTPS_PROXY": "http://127.0.0.1:{port}"}, id="proxy"),
    ],
)
def test_an_endpoint_that_is_not_there_fails_in_seconds(shop: Path, env: dict[str, str]) -> None:
    port = _closed_port()
    started = time.monotonic()
    done = _cli(
        shop,
        "ci",
        "--no-comment",
        "--output-dir",
        "out",
        GOOGLE_API_KEY="dummy-key",
        **{k: v.format(port=port) for k, v in env.items()},
    )
    took = time.monotonic() - started
    assert done.returncode == 2, done.stderr[-2000:]
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "gemini-2.5-flash cannot be reached at" in lines[0], lines
    assert "Traceback" not in done.stderr + done.stdout
    assert took < 20, f"{took:.1f} s"  # was 4 min 43 s (retries under ADK's options); mostly start-up now
    checked = _cli(shop, "validate", GOOGLE_API_KEY="dummy-key", **{k: v.format(port=port) for k, v in env.items()})
    assert checked.returncode == 0 and "cannot be reached" in checked.stdout, checked.stderr


def test_a_reachable_endpoint_is_not_refused(shop: Path) -> None:
    """The real google-genai client against the fake Gemini: the probe (a GET it answers 501) counts as reached, and
    the agent's model calls go there."""
    server = FakeGemini(lambda prompt: "Your total is 42.")
    try:
        done = _cli(
            shop, "run", "--output", "out/results.json", GOOGLE_API_KEY="fake", GOOGLE_GEMINI_BASE_URL=server.url
        )
    finally:
        server.close()
    assert "cannot be reached" not in done.stderr, done.stderr
    assert server.requests, done.stderr[-2000:]  # the agent's own model calls reached it
    results = json.loads((shop / "out" / "results.json").read_text())
    assert results["offline"] is None


def test_a_real_run_never_compares_with_an_offline_baseline(shop: Path) -> None:
    """A file store holding results made offline (copied there by hand): the real run fails closed, saying why."""
    assert _cli(shop, "run", "--offline", "--output", "baseline/results.json").returncode == 0
    server = FakeGemini(lambda prompt: "Your total is 42.")
    try:
        done = _cli(
            shop, "ci", "--no-comment", "--output-dir", "out", GOOGLE_API_KEY="fake", GOOGLE_GEMINI_BASE_URL=server.url
        )
    finally:
        server.close()
    assert done.returncode == 1, done.stdout[-2000:] + done.stderr[-2000:]
    assert "made with --offline" in done.stdout + done.stderr and "not comparable" in done.stdout + done.stderr
    comparison = json.loads((shop / "out" / "comparison.json").read_text())
    assert comparison["verdict"] == "fail" and comparison["baseline"] is None
