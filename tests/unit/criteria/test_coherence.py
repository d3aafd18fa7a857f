"""`response_evaluation_score` (ADK's coherence, 1-5) against a fake Cloud Storage and a fake Vertex AI evaluation
service on 127.0.0.1.

Parity: ADK's own ResponseEvaluator drives the real Vertex AI SDK, which downloads the COHERENCE definition from the
fake storage through google-cloud-storage and posts to the fake service; our requests must be the same bodies and
our scores the ones ADK reads back.
"""

from __future__ import annotations

import asyncio
import json
from http.server import BaseHTTPRequestHandler
from urllib.parse import unquote, urlparse

import pytest

from adk_eval_gate.criteria.engine.criterion import Cause, ScoringInput, Status
from adk_eval_gate.criteria.engine.judge import Judge
from adk_eval_gate.criteria.engine.judging import JudgeJob, judge_all
from adk_eval_gate.criteria.registry import resolve_criteria
from adk_eval_gate.criteria.vertex_metrics import CoherenceOptions, score_coherence
from adk_eval_gate.evalsets.adk_eval_schema import EvalCase, Invocation
from adk_eval_gate.llm.cache import LlmCache
from adk_eval_gate.llm.client import LlmClient, LlmSettings
from adk_eval_gate.targets.case_run import CaseRun
from tests.support.adk_required import adk
from tests.support.loopback import LoopbackServer, reply
from tests.unit.criteria.test_vertex_metrics import adk_sdk, scored, to_adk, turn, vertex  # noqa: F401 (fixtures)

BUCKET = "vertex-ai-generative-ai-eval-sdk-resources"
YAML = "metrics/coherence/v1.yaml"
JSON = "metrics/coherence/v1.json"
DEFINITION = """\
name: coherence
prompt_template: |
  # Instruction
  Rate the coherence of the AI response from 1 to 5.
  ## User prompt
  {prompt}
  ## AI-generated response
  {response}
judge_model_system_instruction: You are an expert evaluator.
judge_model_sampling_count: 4
return_raw_output: true
"""


class FakeStorage:
    """The Cloud Storage JSON API as google-cloud-storage reaches it through STORAGE_EMULATOR_HOST: object metadata
    (the SDK's `exists()`), the bucket, and `alt=media` downloads of `objects`."""

    def __init__(self) -> None:
        self.objects: dict[str, str] = {f"{BUCKET}/{YAML}": DEFINITION}
        self.requests: list[str] = []
        self.status: int | None = None
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def do_GET(self):
                fake.requests.append(self.path)
                url = urlparse(self.path)
                path = unquote(url.path).removeprefix("/download").removeprefix("/storage/v1/b/")
                bucket, _, name = path.partition("/o/")
                if fake.status:
                    self.reply(fake.status, b'{"error": {"code": 503, "message": "storage is down"}}')
                elif not name:
                    self.reply(200, json.dumps({"name": bucket}).encode())
                elif f"{bucket}/{name}" not in fake.objects:
                    self.reply(404, b'{"error": {"code": 404, "message": "No such object"}}')
                elif "alt=media" in url.query:
                    self.reply(200, fake.objects[f"{bucket}/{name}"].encode(), "application/octet-stream")
                else:
                    self.reply(200, json.dumps({"name": name, "bucket": bucket}).encode())

            def reply(self, status: int, data: bytes, ctype: str = "application/json") -> None:
                reply(self, status, data, ctype)

        self._loopback = LoopbackServer(Handler)
        self.url = self._loopback.url

    @property
    def downloads(self) -> list[str]:
        return [r for r in self.requests if "alt=media" in r]

    def close(self) -> None:
        self._loopback.close()


@pytest.fixture
def storage(monkeypatch):
    server = FakeStorage()
    monkeypatch.setenv("STORAGE_EMULATOR_HOST", server.url)
    yield server
    server.close()


@pytest.fixture
def sdk(adk_sdk, storage):  # noqa: F811 (the imported fixture)
    """ADK's facade with the SDK's in-process metric cache emptied, so each test's definition is downloaded."""
    for module in ("vertexai._genai._evals_metric_loaders", "agentplatform._genai._evals_metric_loaders"):
        loaders = pytest.importorskip(module)
        loaders.LazyLoadedPrebuiltMetric._cache.clear()
    return adk_sdk


def ours(actual, expected, *, threshold=3.0, cache=None):
    judge = Judge(LlmClient(LlmSettings(retries=0), LlmCache(cache)))
    data = ScoringInput(EvalCase(eval_id="c", conversation=expected), actual, expected)
    return asyncio.run(score_coherence(data, CoherenceOptions(threshold=threshold), judge)), judge


def theirs(actual, expected, threshold=3.0):
    ResponseEvaluator = adk("evaluation.response_evaluator").ResponseEvaluator
    evaluator = ResponseEvaluator(threshold=threshold, metric_name="response_evaluation_score")
    return evaluator.evaluate_invocations(to_adk(actual), to_adk(expected))


def dialogue(*answers: str) -> tuple[list[Invocation], list[Invocation]]:
    actual = [turn(i, f"question {i}", a) for i, a in enumerate(answers)]
    expected = [turn(i, f"question {i}", "the golden answer" if i % 2 else None) for i in range(len(answers))]
    return actual, expected


def test_requests_are_the_ones_adks_sdk_sends(sdk, storage):
    for definition in (DEFINITION, "name: c\nprompt_template: 'Rate {response}'\n"):
        storage.objects[f"{BUCKET}/{YAML}"] = definition
        for module in ("vertexai._genai._evals_metric_loaders", "agentplatform._genai._evals_metric_loaders"):
            pytest.importorskip(module).LazyLoadedPrebuiltMetric._cache.clear()
        sdk.requests.clear()
        actual, expected = dialogue("A clear answer.", "line one\nline two")
        theirs(actual, expected)
        ours(actual, expected)
        assert len(sdk.requests) == 4
        bodies = [r["body"] for r in sdk.requests]
        key = lambda body: json.dumps(body, sort_keys=True)  # noqa: E731
        assert sorted(map(key, bodies[2:])) == sorted(map(key, bodies[:2]))
        assert sorted(bool(b["instance"].get("reference")) for b in bodies[2:]) == [False, True]
    # The last definition, as the SDK sends it; the first one's judge settings went out the same way in both.
    assert bodies[0]["metrics"] == [{"llm_based_metric_spec": {"metric_prompt_template": "Rate {response}"}}]
    assert storage.downloads and all(YAML.replace("/", "%2F") in d for d in storage.downloads)


def test_the_judge_settings_of_the_definition_are_sent():
    from adk_eval_gate.criteria.engine.vertex_service import _parse_template, llm_metric_spec

    spec = llm_metric_spec(_parse_template("gs://b/v1.yaml", DEFINITION, "yaml"))["llm_based_metric_spec"]
    assert spec["system_instruction"] == "You are an expert evaluator."
    assert spec["judge_autorater_config"] == {"sampling_count": 4}
    assert spec["custom_output_format_config"] == {"return_raw_output": True}
    assert spec["metric_prompt_template"].startswith("# Instruction\n")


def test_scores_equal_adks_for_the_same_replies(sdk):
    sdk.replies = {
        "Very coherent.": scored(5),
        "Rambling.": scored(2),
        "Broken.": scored(4, error={"code": 13, "message": "judge failed"}),
        "Fine.": scored(3),
    }
    for answers, threshold in (
        (("Very coherent.", "Rambling."), 3.0),
        (("Very coherent.", "Rambling.", "Fine."), 3.5),
        (("Fine.", "Broken."), 3.0),
        (("Very coherent.",), 5),
        (("Rambling.",), 0.5),  # an ADK threshold at or under 1 is still on the 1-5 scale
    ):
        actual, expected = dialogue(*answers)
        mine, _ = ours(actual, expected, threshold=threshold)
        adk_result = theirs(actual, expected, threshold)
        assert mine.score == adk_result.overall_score
        assert mine.status.value == adk_result.overall_eval_status.name.lower()
        assert [p.score for p in mine.per_invocation] == [p.score for p in adk_result.per_invocation_results]
        statuses = [p.eval_status.name.lower() for p in adk_result.per_invocation_results]
        assert [p.status.value for p in mine.per_invocation] == statuses
    mine, _ = ours(*dialogue("Fine.", "Broken."))
    assert "judge failed" in mine.per_invocation[1].detail and mine.per_invocation[0].detail == "scripted"


def test_the_definition_is_downloaded_once_and_cached_for_a_rerun(vertex, storage, tmp_path):  # noqa: F811
    actual, expected = dialogue("One.", "Two.", "Three.")
    first, _ = ours(actual, expected, cache=tmp_path)
    assert first.score == 0.5 and len(storage.downloads) == 1  # three invocations, one download
    storage.objects.clear()
    storage.status = 503  # a re-run needs neither storage nor, for unchanged answers, the service
    again, judge = ours(actual, expected, cache=tmp_path)
    assert (
        again.score == 0.5
        and len(vertex.requests) == 3
        and judge.llm.stats["response_evaluation_score"].cache_hits == 3
    )
    changed, _ = ours(*dialogue("One.", "Two!", "Three."), cache=tmp_path)
    assert changed.score == 0.5 and len(vertex.requests) == 4 and len(storage.downloads) == 1


def test_a_json_definition_is_used_when_there_is_no_yaml(sdk, storage):
    storage.objects = {
        f"{BUCKET}/{JSON}": json.dumps({"name": "coherence", "prompt_template": "Judge {response} (json)"})
    }
    actual, expected = dialogue("Hi.")
    theirs(actual, expected)
    mine, _ = ours(actual, expected)
    bodies = [r["body"] for r in sdk.requests]
    assert len(bodies) == 2 and bodies[0] == bodies[1]
    assert bodies[1]["metrics"][0]["llm_based_metric_spec"] == {"metric_prompt_template": "Judge {response} (json)"}
    assert mine.score == 0.5


@pytest.mark.parametrize(
    ("objects", "status", "reason"),
    [
        ({}, None, f"not in Cloud Storage: gs://{BUCKET}/{YAML} nor gs://{BUCKET}/{JSON} (HTTP 404)"),
        (None, 503, "HTTP 503"),
        ({f"{BUCKET}/{YAML}": "- just\n- a list\n"}, None, "is not an LLM metric definition"),
        ({f"{BUCKET}/{YAML}": "prompt_template: x\n"}, None, "its name is missing"),
        ({f"{BUCKET}/{YAML}": "prompt_template: [unclosed\n"}, None, "is not valid YAML"),
    ],
)
def test_a_definition_that_cannot_be_fetched_is_an_error_with_the_reason(
    vertex,  # noqa: F811
    storage,
    objects,
    status,
    reason,
):
    if objects is not None:
        storage.objects = objects
    storage.status = status
    actual, expected = dialogue("One.")
    case = EvalCase(eval_id="c", conversation=expected)
    [criterion] = resolve_criteria({"response_evaluation_score": 4}, None)
    job = JudgeJob(("a", "s", "c"), case, CaseRun("s", "c", 0, tuple(actual)), criterion)
    judge = Judge(LlmClient(LlmSettings(retries=0), LlmCache(None)))
    outcome = asyncio.run(judge_all([job], judge))[job.key][(0, "response_evaluation_score")]
    assert outcome.status is Status.ERROR and outcome.score is None
    assert "COHERENCE metric could not be fetched" in outcome.reason and reason in outcome.reason
    assert vertex.requests == []


def test_without_credentials_it_is_not_evaluated_and_nothing_is_fetched(storage, monkeypatch):
    for name in ("GOOGLE_API_KEY", "GOOGLE_CLOUD_PROJECT", "GOOGLE_CLOUD_LOCATION"):
        monkeypatch.delenv(name, raising=False)
    outcome, _ = ours(*dialogue("One."))
    assert outcome.status is Status.NOT_EVALUATED and outcome.cause is Cause.NO_CREDENTIALS
    assert outcome.reason.startswith("response_evaluation_score runs on the Vertex AI evaluation service")
    assert storage.requests == []
