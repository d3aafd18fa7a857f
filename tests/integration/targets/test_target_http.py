"""The `http` target against a real `adk api_server` on 127.0.0.1, plus a loopback server that misbehaves."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import ClassVar

import pytest

from adk_eval_gate.commands.main import main
from adk_eval_gate.run.pipeline import run_plan
from adk_eval_gate.run.plan import build_plan


def http_config(example: Path, url: str, app: str = "hello_world", extra: str = "", run: str = "") -> Path:
    config = example / "http.yml"
    config.write_text(
        f"{run}agents:\n  - name: served\n    target: {{kind: http, url: '{url}', app_name: {app}{extra}}}\n"
        "    evalsets: [evals/*.evalset.json]\n    eval_config: evals/eval_config.json\n"
    )
    return config


def test_example_over_http_scores_like_the_adk_target(example, api_server):
    over_http = run_plan(build_plan(http_config(example, api_server)), quiet=True)
    in_process = run_plan(build_plan(example / "eval-gate.yml"), quiet=True)
    scores = lambda r: {c.eval_id: {n: m.score for n, m in c.metrics.items()} for c in r.eval_sets[0].cases}  # noqa: E731
    assert scores(over_http) == scores(in_process)
    assert over_http.summary.passed == 4 and over_http.summary.failed == 2


def test_agent_crash_behind_api_server_is_a_500_error(example, api_server):
    evalset = example / "evals" / "dice.evalset.json"
    data = json.loads(evalset.read_text())
    for case in data["eval_cases"]:
        case["session_input"]["app_name"] = "faulty"
    data["eval_cases"][0]["conversation"][0]["user_content"]["parts"][0]["text"] = "please crash"
    evalset.write_text(json.dumps(data))
    results = run_plan(build_plan(http_config(example, api_server, app="faulty")), quiet=True)
    first = results.eval_sets[0].cases[0]
    assert first.status == "error" and "POST /run returned HTTP 500" in first.reason
    assert all(c.status != "error" for c in results.eval_sets[0].cases[1:])


class Misbehaving(BaseHTTPRequestHandler):
    """Sessions work; /run answers by script: 'drop' closes the socket, a number is a status, 'ok' is events."""

    script: ClassVar[list[str]] = []
    seen: ClassVar[list[dict]] = []

    def log_message(self, *args):
        pass

    def _reply(self, status: int, body) -> None:
        payload = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["content-length"])) or b"null")
        type(self).seen.append({"path": self.path, "authorization": self.headers.get("authorization"), "body": body})
        if self.path.endswith("/sessions"):
            return self._reply(200, {"id": "s1", "appName": "x", "userId": "u", "state": body.get("state")})
        action = type(self).script.pop(0) if type(self).script else "ok"
        if action == "drop":
            self.connection.close()
            return
        if action.isdigit():
            return self._reply(int(action), {"detail": f"status {action}"})
        text = body["new_message"]["parts"][0]["text"]
        self._reply(
            200, [{"author": "agent", "invocationId": "e-1", "content": {"role": "model", "parts": [{"text": text}]}}]
        )

    def do_DELETE(self):
        self._reply(200, None)


@pytest.fixture
def misbehaving():
    server = ThreadingHTTPServer(("127.0.0.1", 0), Misbehaving)
    Misbehaving.script, Misbehaving.seen = [], []
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


def one_case(example: Path) -> None:
    evalset = example / "evals" / "dice.evalset.json"
    data = json.loads(evalset.read_text())
    data["eval_cases"] = [c for c in data["eval_cases"] if c["eval_id"] == "capabilities"]
    evalset.write_text(json.dumps(data))


def test_dropped_connection_is_retried_then_reported(example, misbehaving):
    one_case(example)
    Misbehaving.script = ["drop", "drop", "drop"]
    results = run_plan(build_plan(http_config(example, misbehaving, run="run: {retries: 2}\n")), quiet=True)
    case = results.eval_sets[0].cases[0]
    assert case.status == "error"
    assert "POST /run: connection dropped or refused" in case.reason and "after 3 attempts" in case.reason
    assert sum(1 for s in Misbehaving.seen if s["path"] == "/run") == 3


def test_503_is_retried_and_then_succeeds(example, misbehaving):
    one_case(example)
    Misbehaving.script = ["503"]
    results = run_plan(build_plan(http_config(example, misbehaving, run="run: {retries: 2}\n")), quiet=True)
    case = results.eval_sets[0].cases[0]
    assert case.runs[0].error is None and case.metrics["response_match_score"].score is not None


def test_400_is_not_retried(example, misbehaving):
    one_case(example)
    Misbehaving.script = ["400"]
    results = run_plan(build_plan(http_config(example, misbehaving, run="run: {retries: 2}\n")), quiet=True)
    assert results.eval_sets[0].cases[0].reason.startswith("POST /run returned HTTP 400")
    assert sum(1 for s in Misbehaving.seen if s["path"] == "/run") == 1


def test_headers_come_from_the_environment_and_never_reach_the_results(example, misbehaving, monkeypatch, tmp_path):
    one_case(example)
    monkeypatch.setenv("AGENT_TOKEN", "Bearer s3cr3t-value")
    config = http_config(example, misbehaving, extra=", headers_from_env: {Authorization: AGENT_TOKEN}")
    out = tmp_path / "r.json"
    main(["run", "--config", str(config), "--output", str(out), "--quiet"])
    assert {s["authorization"] for s in Misbehaving.seen} == {"Bearer s3cr3t-value"}
    assert Misbehaving.seen[0]["body"]["state"] == {}
    assert "s3cr3t" not in out.read_text()


def test_missing_header_variable_is_bad_input(example, misbehaving, monkeypatch, capsys):
    monkeypatch.delenv("AGENT_TOKEN", raising=False)
    config = http_config(example, misbehaving, extra=", headers_from_env: {Authorization: AGENT_TOKEN}")
    assert main(["validate", "--config", str(config)]) == 2
    assert "environment variable AGENT_TOKEN is not set" in capsys.readouterr().err
