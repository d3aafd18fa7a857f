"""safety_v1 through google-genai's Vertex AI client against a fake Vertex AI evaluation service on 127.0.0.1."""

from __future__ import annotations

import asyncio
import json
from http.server import BaseHTTPRequestHandler

import pytest

from adk_eval_gate.criteria.engine.criterion import ScoringInput, Status
from adk_eval_gate.criteria.engine.judge import Judge
from adk_eval_gate.criteria.engine.options import ThresholdOptions
from adk_eval_gate.criteria.safety import missing_project, score_safety
from adk_eval_gate.evalsets.adk_eval_schema import EvalCase, Invocation
from adk_eval_gate.llm.cache import LlmCache
from adk_eval_gate.llm.client import LlmClient, LlmSettings
from tests.support.adk_required import adk
from tests.support.loopback import LoopbackServer, reply

SCORES = {"a kind answer": 1.0, "a nasty answer": 0.0, "an odd answer": None}


class FakeVertexEval:
    """`POST .../v1beta1/...:evaluateInstances` with the predefined safety metric; the score follows the response."""

    def __init__(self, failures: int = 0) -> None:
        self.requests: list[dict] = []
        self.failures = failures
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))))
                fake.requests.append({"path": self.path, "body": body, "key": self.headers.get("x-goog-api-key")})
                if fake.failures > 0:
                    fake.failures -= 1
                    status, payload = 503, {"error": {"code": 503, "message": "busy", "status": "UNAVAILABLE"}}
                elif not self.path.endswith(":evaluateInstances"):
                    status, payload = 404, {"error": {"code": 404, "message": "no such method", "status": "NOT_FOUND"}}
                else:
                    score = SCORES[body["instance"]["response"]["contents"]["contents"][0]["parts"][0]["text"]]
                    result = {"explanation": "scripted"} | (
                        {"score": score} if score is not None else {"error": {"code": 3, "message": "cannot rate"}}
                    )
                    status, payload = 200, {"metricResults": [result]}
                reply(self, status, json.dumps(payload).encode())

        self._loopback = LoopbackServer(Handler)
        self.url = self._loopback.url

    def close(self) -> None:
        self._loopback.close()


@pytest.fixture
def vertex(monkeypatch):
    server = FakeVertexEval()
    monkeypatch.setenv("GOOGLE_API_KEY", "fake-express-key")
    monkeypatch.setenv("GOOGLE_VERTEX_BASE_URL", server.url)
    yield server
    server.close()


def inv(answer: str) -> Invocation:
    return Invocation.model_validate(
        {
            "user_content": {"role": "user", "parts": [{"text": "tell me"}]},
            "final_response": {"role": "model", "parts": [{"text": answer}]},
        }
    )


def score(answers: list[str], *, cache=None, expected: list[str] | None = None, retries: int = 0):
    actual = [inv(a) for a in answers]
    reference = [inv(e) for e in expected] if expected else None
    judge = Judge(LlmClient(LlmSettings(retries=retries, backoff=0.01), LlmCache(cache)))
    data = ScoringInput(EvalCase(eval_id="c", conversation=reference or actual), actual, reference)
    return asyncio.run(score_safety(data, ThresholdOptions(threshold=0.8), judge)), judge


def test_scores_are_the_services_per_invocation_and_their_mean(vertex):
    outcome, judge = score(["a kind answer", "a nasty answer", "an odd answer", "a kind answer"], expected=["x"] * 4)
    assert [p.score for p in outcome.per_invocation] == [1.0, 0.0, None, 1.0]
    assert outcome.score == pytest.approx(2 / 3) and outcome.status is Status.FAILED
    assert (
        outcome.per_invocation[2].status is Status.NOT_EVALUATED and "cannot rate" in outcome.per_invocation[2].detail
    )
    request = vertex.requests[0]
    assert request["path"].startswith("/v1beta1/") and request["key"] == "fake-express-key"
    assert request["body"]["metrics"] == [{"predefined_metric_spec": {"metric_spec_name": "safety_v1"}}]
    instances = sorted((r["body"]["instance"] for r in vertex.requests), key=json.dumps)
    assert {k: instances[0][k] for k in ("prompt", "response", "reference")} == {
        "prompt": {"contents": {"contents": [{"parts": [{"text": "tell me"}]}]}},
        "response": {"contents": {"contents": [{"parts": [{"text": "a kind answer"}]}]}},
        "reference": {"contents": {"contents": [{"parts": [{"text": "x"}]}]}},
    }
    assert judge.llm.stats["safety_v1"].calls == 4


def test_aggregation_matches_adks_facade(vertex, tmp_path, monkeypatch):
    """ADK's facade on the same service scores (its service call is the one thing replaced here)."""
    adc = tmp_path / "adc.json"  # the Vertex SDK insists on Application Default Credentials even in express mode
    adc.write_text(
        json.dumps({"type": "authorized_user", "client_id": "c", "client_secret": "s", "refresh_token": "r"})
    )
    monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(adc))
    monkeypatch.setenv("GOOGLE_CLOUD_PROJECT", "fake-project")
    AdkInvocation = adk("evaluation.eval_case").Invocation
    EvalMetric = adk("evaluation.eval_metrics").EvalMetric
    SafetyEvaluatorV1 = adk("evaluation.safety_evaluator").SafetyEvaluatorV1
    _SingleTurnVertexAiEvalFacade = adk("evaluation.vertex_ai_eval_facade")._SingleTurnVertexAiEvalFacade

    answers = ["a kind answer", "a nasty answer", "a kind answer", "an odd answer"]
    mine, _ = score(answers)
    evaluator = SafetyEvaluatorV1(EvalMetric(metric_name="safety_v1", threshold=0.8))
    replies = iter(answers)

    class Summary:
        def __init__(self, value):
            self.mean_score = float("nan") if value is None else value

    class Result:
        def __init__(self, value):
            self.summary_metrics = [Summary(value)]
            self.eval_case_results = []

    monkeypatch.setattr(
        _SingleTurnVertexAiEvalFacade, "_perform_eval", lambda self, dataset, metrics: Result(SCORES[next(replies)])
    )
    theirs = evaluator.evaluate_invocations([AdkInvocation.model_validate(inv(a).model_dump()) for a in answers], None)
    assert mine.score == theirs.overall_score
    assert [p.score for p in mine.per_invocation] == [p.score for p in theirs.per_invocation_results]


def test_cached_rerun_and_retried_503(vertex, tmp_path):
    vertex.failures = 1
    first, _ = score(["a kind answer"], cache=tmp_path, retries=2)
    assert first.score == 1.0 and len(vertex.requests) == 2  # the 503, then the answer
    again, judge = score(["a kind answer"], cache=tmp_path)
    assert again.score == 1.0 and len(vertex.requests) == 2 and judge.llm.stats["safety_v1"].cache_hits == 1


def test_without_a_project_it_says_what_to_set(monkeypatch):
    for name in ("GOOGLE_API_KEY", "GOOGLE_CLOUD_PROJECT", "GOOGLE_CLOUD_LOCATION"):
        monkeypatch.delenv(name, raising=False)
    outcome, _ = score(["a kind answer"])
    assert outcome.status is Status.NOT_EVALUATED and outcome.score is None
    assert "GOOGLE_CLOUD_PROJECT and GOOGLE_CLOUD_LOCATION" in outcome.reason and "\n" not in outcome.reason
    assert "needs GOOGLE_CLOUD_LOCATION" in missing_project({"GOOGLE_CLOUD_PROJECT": "p"})
    assert missing_project({"GOOGLE_CLOUD_PROJECT": "p", "GOOGLE_CLOUD_LOCATION": "us-central1"}) is None
