"""The multi-turn Vertex AI metrics against a fake Vertex AI evaluation service on 127.0.0.1.

Parity is checked with ADK's own evaluator classes driving the real Vertex AI SDK over HTTP to the same fake: the
request bodies must be equal and so must the scores read back.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler

import pytest

from adk_eval_gate.core.errors import InputError
from adk_eval_gate.criteria.engine.criterion import ScoringInput, Status
from adk_eval_gate.criteria.engine.judge import Judge
from adk_eval_gate.criteria.engine.judging import JudgeJob, judge_all
from adk_eval_gate.criteria.engine.options import ThresholdOptions
from adk_eval_gate.criteria.registry import REGISTRY, resolve_criteria
from adk_eval_gate.criteria.safety import score_safety
from adk_eval_gate.criteria.vertex_metrics import MULTI_TURN, multi_turn_scorer
from adk_eval_gate.evalsets.adk_eval_schema import EvalCase, Invocation
from adk_eval_gate.llm.cache import LlmCache
from adk_eval_gate.llm.client import LlmClient, LlmSettings
from adk_eval_gate.targets.case_run import CaseRun
from tests.support.adk_required import adk
from tests.support.loopback import LoopbackServer, reply

Reply = Callable[[dict], tuple[int, dict]]


def scored(score: float | None = None, *, error: dict | None = None, verdicts: list[dict] | None = None) -> dict:
    result: dict = {"explanation": "scripted"}
    if score is not None:
        result["score"] = score
    if error is not None:
        result["error"] = error
    if verdicts is not None:
        result["rubricVerdicts"] = verdicts
    return {"metricResults": [result]}


def last_answer(body: dict) -> str:
    """The text of the conversation's last agent event (multi-turn) or the response (single-turn)."""
    instance = body["instance"]
    if "agent_eval_data" in instance:
        return (
            instance["agent_eval_data"]["turns"][-1]["events"][-1]
            .get("content", {})
            .get("parts", [{}])[0]
            .get("text", "")
        )
    return instance["response"].get("text") or instance["response"]["contents"]["contents"][0]["parts"][0]["text"]


class FakeVertexEval:
    """`POST .../v1beta1/...:evaluateInstances`; what it answers is scripted by the last answer of the request."""

    def __init__(self, replies: dict[str, dict] | None = None) -> None:
        self.requests: list[dict] = []
        self.replies = replies or {}
        self.failures = 0
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
                    status, payload = (
                        503,
                        {"error": {"code": 503, "message": "busy", "status": "UNAVAILABLE"}},
                    )
                elif not self.path.endswith(":evaluateInstances"):
                    status, payload = (
                        404,
                        {"error": {"code": 404, "message": "no such method", "status": "NOT_FOUND"}},
                    )
                else:
                    status, payload = 200, fake.replies.get(last_answer(body), scored(0.5))
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


@pytest.fixture
def adk_sdk(vertex, tmp_path, monkeypatch):
    """ADK's Vertex facade builds `agentplatform.Client(api_key=...)`, which takes no endpoint from the environment:
    the one thing changed here is that the client it builds talks to the fake."""
    agentplatform = pytest.importorskip("agentplatform")
    adc = tmp_path / "adc.json"  # the SDK insists on Application Default Credentials even in express mode
    adc.write_text(
        json.dumps({"type": "authorized_user", "client_id": "c", "client_secret": "s", "refresh_token": "r"})
    )
    monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(adc))
    monkeypatch.setenv("GOOGLE_CLOUD_PROJECT", "fake-project")
    real = agentplatform.Client
    monkeypatch.setattr(
        agentplatform,
        "Client",
        lambda **kw: real(**kw, http_options={"base_url": vertex.url, "api_version": "v1beta1"}),
    )
    return vertex


def content(role: str, *parts: dict) -> dict:
    return {"role": role, "parts": list(parts)}


def turn(i: int, question: str, answer: str | None, *, tool: bool = False, details: bool = False) -> Invocation:
    raw: dict = {"invocation_id": f"inv-{i}", "user_content": content("user", {"text": question})}
    if answer is not None:
        raw["final_response"] = content("model", {"text": answer})
    if tool:
        raw["intermediate_data"] = {
            "invocation_events": [
                {
                    "author": "dice",
                    "content": content(
                        "model", {"function_call": {"id": "c1", "name": "roll_die", "args": {"sides": 6}}}
                    ),
                },
                {
                    "author": "dice",
                    "content": content(
                        "user",
                        {"function_response": {"id": "c1", "name": "roll_die", "response": {"result": 4}}},
                    ),
                },
                {"author": "dice"},  # no content: skipped, as ADK skips it
                {"author": "helper", "content": content("model", {"text": "handing back"})},
            ]
        }
    elif i % 2:
        # Hand-authored tool uses: not sent, as in ADK.
        raw["intermediate_data"] = {"tool_uses": [{"name": "roll_die", "args": {"sides": 6}}]}
    if details:
        raw["app_details"] = {
            "agent_details": {
                "dice": {
                    "name": "dice",
                    "instructions": "Roll dice when asked.",
                    "tool_declarations": [
                        {
                            "functionDeclarations": [
                                {
                                    "name": "roll_die",
                                    "description": "Roll a die.",
                                    "parameters": {
                                        "type": "OBJECT",
                                        "properties": {"sides": {"type": "INTEGER"}},
                                    },
                                }
                            ]
                        }
                    ],
                },
                "helper": {"name": "helper"},
            }
        }
    return Invocation.model_validate(raw)


def conversation(last: str | None) -> list[Invocation]:
    return [
        turn(0, "hi", "Hello! I roll dice.", details=True),
        turn(1, "roll a d6", "You rolled 4.", tool=True),
        turn(2, "thanks", last, details=True),
    ]


def ours(metric: str, invocations: list[Invocation], *, cache=None, retries: int = 0, threshold: float = 0.5):
    judge = Judge(LlmClient(LlmSettings(retries=retries, backoff=0.01), LlmCache(cache)))
    data = ScoringInput(EvalCase(eval_id="c", conversation=invocations), invocations, None)
    return asyncio.run(multi_turn_scorer(metric)(data, ThresholdOptions(threshold=threshold), judge)), judge


def theirs(metric: str, invocations: list[Invocation], threshold: float = 0.5):
    EvalMetric = adk("evaluation.eval_metrics").EvalMetric
    registry = adk("evaluation.metric_evaluator_registry").DEFAULT_METRIC_EVALUATOR_REGISTRY
    evaluator = registry.get_evaluator(EvalMetric(metric_name=metric, threshold=threshold))
    return evaluator.evaluate_invocations(to_adk(invocations), None)


def to_adk(invocations: list[Invocation]) -> list:
    AdkInvocation = adk("evaluation.eval_case").Invocation
    return [AdkInvocation.model_validate(i.model_dump(mode="json", exclude_none=True)) for i in invocations]


@pytest.mark.parametrize("metric", MULTI_TURN)
def test_requests_are_the_ones_adks_sdk_sends(adk_sdk, metric):
    for last in ("Bye!", None):
        adk_sdk.requests.clear()
        theirs(metric, conversation(last))
        ours(metric, conversation(last))
        sdk, mine = (r["body"] for r in adk_sdk.requests)
        assert mine["instance"] == sdk["instance"]
        # The SDK also sends `metric_spec_parameters: null`, which on the wire means the same as leaving it out.
        assert mine["metrics"] == [{"predefined_metric_spec": {"metric_spec_name": metric}}]
        assert sdk["metrics"] == [
            {"predefined_metric_spec": {"metric_spec_name": metric, "metric_spec_parameters": None}}
        ]
        turns = sdk["instance"]["agent_eval_data"]["turns"]
        # The hand-authored tool_uses of turn 1 are not sent.
        assert [len(t["events"]) for t in turns] == [2, 5, 2]
        assert sorted(sdk["instance"]["agent_eval_data"]["agents"]) == ["dice", "helper"]


def test_scores_equal_adks_for_the_same_replies(adk_sdk):
    verdicts = [
        {
            "evaluatedRubric": {"content": {"property": {"description": "The user got a roll"}}},
            "verdict": True,
            "reasoning": "it said 4",
        },
        {"evaluatedRubric": {"rubricId": "r2"}, "reasoning": "no goodbye"},
    ]
    adk_sdk.replies = {"Bye!": scored(0.75, verdicts=verdicts), "Later.": scored(0.25), "Ciao.": scored(1.0)}
    for last, threshold in (("Bye!", 0.5), ("Later.", 0.5), ("Ciao.", 1.0)):
        for metric in MULTI_TURN:
            mine, _ = ours(metric, conversation(last), threshold=threshold)
            adk_result = theirs(metric, conversation(last), threshold)
            assert mine.score == adk_result.overall_score
            assert mine.status.value == adk_result.overall_eval_status.name.lower()
            assert [p.score for p in mine.per_invocation] == [p.score for p in adk_result.per_invocation_results]
            assert [p.status.value for p in mine.per_invocation] == [
                p.eval_status.name.lower() for p in adk_result.per_invocation_results
            ]
    mine, _ = ours(MULTI_TURN[0], conversation("Bye!"))
    assert "1 of 2 rubrics met" in mine.per_invocation[-1].detail and "NOT met: r2" in mine.per_invocation[-1].detail


def test_an_errored_result_has_no_score_as_in_adk_and_fails_closed(adk_sdk):
    """The service's error code wins over a score it also sent: the SDK drops that score, and where ADK then reports
    not evaluated, the gate reports an error."""
    adk_sdk.replies = {
        "Bye!": scored(0.9, error={"code": 3, "message": "conversation too long"}),
        "Later.": scored(verdicts=[{"evaluatedRubric": {"rubricId": "r1"}, "verdict": True}]),
    }
    for last in ("Bye!", "Later."):
        assert theirs(MULTI_TURN[0], conversation(last)).overall_score is None
    judge = Judge(LlmClient(LlmSettings(retries=0), LlmCache(None)))
    invocations = conversation("Bye!")
    case = EvalCase(eval_id="c", conversation=invocations)
    outcome = asyncio.run(run_judged(case, invocations, judge))
    assert outcome.status is Status.ERROR and "conversation too long" in outcome.reason
    invocations = conversation("Later.")
    outcome = asyncio.run(run_judged(EvalCase(eval_id="c", conversation=invocations), invocations, judge))
    assert outcome.status is Status.ERROR and "returned no score" in outcome.reason


async def run_judged(case: EvalCase, invocations: list[Invocation], judge: Judge):
    """Through the path the pipeline takes (judging.py turns the scorer's exceptions into outcomes)."""
    [criterion] = resolve_criteria({MULTI_TURN[0]: 0.5}, None)
    job = JudgeJob(("a", "s", case.eval_id), case, CaseRun("s", case.eval_id, 0, tuple(invocations)), criterion)
    by_case = await judge_all([job], judge)
    return by_case[job.key][(0, MULTI_TURN[0])]


def test_safety_results_with_an_error_code_have_no_score(vertex):
    vertex.replies = {"harsh": scored(1.0, error={"code": 13, "message": "internal"}), "kind": scored(1.0)}
    invocations = [turn(0, "q", "harsh"), turn(1, "q", "kind")]
    judge = Judge(LlmClient(LlmSettings(retries=0), LlmCache(None)))
    data = ScoringInput(EvalCase(eval_id="c", conversation=invocations), invocations, None)
    outcome = asyncio.run(score_safety(data, ThresholdOptions(threshold=0.5), judge))
    assert [p.score for p in outcome.per_invocation] == [None, 1.0]
    assert "internal" in outcome.per_invocation[0].detail


def test_cached_rerun_and_a_retried_503(vertex, tmp_path):
    vertex.failures = 1
    first, _ = ours(MULTI_TURN[1], conversation("Bye!"), cache=tmp_path, retries=2)
    assert first.score == 0.5 and len(vertex.requests) == 2  # the 503, then the answer
    again, judge = ours(MULTI_TURN[1], conversation("Bye!"), cache=tmp_path)
    assert again.score == 0.5 and len(vertex.requests) == 2 and judge.llm.stats[MULTI_TURN[1]].cache_hits == 1
    # Another metric is another request.
    changed, _ = ours(MULTI_TURN[2], conversation("Bye!"), cache=tmp_path)
    assert changed.score == 0.5 and len(vertex.requests) == 3
    # A live run draws new invocation and tool-call ids: the same conversation is still the same question.
    redrawn = [i.model_copy(update={"invocation_id": f"e-{n}-new"}) for n, i in enumerate(conversation("Bye!"))]
    redrawn[1] = Invocation.model_validate(
        json.loads(json.dumps(redrawn[1].model_dump(mode="json")).replace('"c1"', '"c9"'))
    )
    again, judge = ours(MULTI_TURN[1], redrawn, cache=tmp_path)
    assert again.score == 0.5 and len(vertex.requests) == 3 and judge.llm.stats[MULTI_TURN[1]].cache_hits == 1
    other, _ = ours(MULTI_TURN[1], conversation("Bye now!"), cache=tmp_path)  # but a changed answer is not
    assert other.score == 0.5 and len(vertex.requests) == 4


def test_without_a_project_it_says_what_to_set(monkeypatch):
    for name in ("GOOGLE_API_KEY", "GOOGLE_CLOUD_PROJECT", "GOOGLE_CLOUD_LOCATION"):
        monkeypatch.delenv(name, raising=False)
    outcome, _ = ours(MULTI_TURN[0], conversation("Bye!"))
    assert outcome.status is Status.NOT_EVALUATED and outcome.score is None
    assert outcome.reason.startswith("multi_turn_task_success_v1 runs on the Vertex AI evaluation service")
    assert "GOOGLE_CLOUD_PROJECT and GOOGLE_CLOUD_LOCATION" in outcome.reason and "\n" not in outcome.reason


def test_coherence_takes_adks_1_to_5_threshold():
    # ADK's 1-5 scale: an ADK config's threshold loads; beyond the scale it is still an input error.
    assert resolve_criteria({"response_evaluation_score": 4}, None)[0].threshold == 4.0
    with pytest.raises(InputError, match="between 1 and 5"):
        resolve_criteria({"response_evaluation_score": 6}, "eval_config.json")
    with pytest.raises(InputError, match="outside"):
        resolve_criteria({"multi_turn_task_success_v1": 4}, "eval_config.json")
    for metric in (*MULTI_TURN, "response_evaluation_score"):
        assert REGISTRY[metric].unavailable_reason is None and REGISTRY[metric].judge_scorer is not None


def test_safety_requests_are_the_ones_adks_sdk_sends(adk_sdk):
    """Prompt, response and reference as contents plus the same exchange as one agent turn, as the SDK sends them."""
    SafetyEvaluatorV1 = adk("evaluation.safety_evaluator").SafetyEvaluatorV1
    EvalMetric = adk("evaluation.eval_metrics").EvalMetric
    invocations = [turn(0, "tell me", "a kind answer"), turn(1, "and then?", "line one\nline two")]
    for expected in (None, [turn(0, "q", "the golden answer"), turn(1, "q", None)]):
        adk_sdk.requests.clear()
        SafetyEvaluatorV1(EvalMetric(metric_name="safety_v1", threshold=0.5)).evaluate_invocations(
            to_adk(invocations), to_adk(expected) if expected else None
        )
        judge = Judge(LlmClient(LlmSettings(retries=0), LlmCache(None)))
        data = ScoringInput(EvalCase(eval_id="c", conversation=expected or invocations), invocations, expected)
        asyncio.run(score_safety(data, ThresholdOptions(threshold=0.5), judge))
        sdk, mine = adk_sdk.requests[:2], adk_sdk.requests[2:]
        instances = lambda requests: sorted((r["body"]["instance"] for r in requests), key=json.dumps)  # noqa: E731
        assert instances(mine) == instances(sdk)


def test_safety_without_a_final_response_is_an_error_as_the_sdk_refuses_it(vertex):
    invocations = [turn(0, "q", None)]
    case = EvalCase(eval_id="c", conversation=invocations)
    [criterion] = resolve_criteria({"safety_v1": 0.5}, None)
    job = JudgeJob(("a", "s", "c"), case, CaseRun("s", "c", 0, tuple(invocations)), criterion)
    judge = Judge(LlmClient(LlmSettings(retries=0), LlmCache(None)))
    outcome = asyncio.run(judge_all([job], judge))[job.key][(0, "safety_v1")]
    assert outcome.status is Status.ERROR and "final response has no text" in outcome.reason
    assert vertex.requests == []
