"""agents-cli's prompt-template and predefined metrics go to the evaluation service exactly as agents-cli sends
them: the SDK itself (google-cloud-aiplatform 2.7, dev extra) and our scorer post to the same fake service on
127.0.0.1 for the same generated cases, and the request bodies must be equal."""

from __future__ import annotations

import asyncio
import json
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import pytest
import yaml

from adk_eval_gate.criteria.agents_cli_metrics import resolve_agents_cli_metrics
from adk_eval_gate.criteria.engine.criterion import Status
from adk_eval_gate.criteria.engine.judge import Judge
from adk_eval_gate.criteria.engine.judging import JudgeJob, judge_all
from adk_eval_gate.criteria.engine.scoring import score_case
from adk_eval_gate.evalsets.agents_cli_config import parse_agents_cli_config
from adk_eval_gate.evalsets.agents_cli_traces import generated_case
from adk_eval_gate.evalsets.loader import parse_eval_set
from adk_eval_gate.llm.cache import LlmCache
from adk_eval_gate.llm.client import LlmClient, LlmSettings
from adk_eval_gate.targets.case_run import CaseRun
from tests.support.loopback import LoopbackServer, reply
from tests.unit.criteria.test_agents_cli_metrics import CASES, _invocation
from tests.unit.criteria.test_vertex_metrics import scored

CONFIG = """\
metrics_to_run: [general_quality, multi_turn_general_quality, judge, final_response_quality, safety_v3, sandboxed,
                 exact_match, bleu, rouge_l_sum]
custom_metrics:
  - name: exact_match
  - name: bleu
  - name: rouge_l_sum
  - name: sandboxed
    execution: remote
    custom_function: |
      def evaluate(instance):
          return 1
  - name: judge
    prompt_template: "Rate {response} for {expected_tool}, case {eval_case_id}, said {conversation_history} {nothing}"
    judge_model: gemini-2.5-flash
    judge_model_sampling_count: 2
    judge_model_system_instruction: be fair
    return_raw_output: true
  - name: final_response_quality
    judge_model: gemini-2.5-pro
    metric_spec_parameters: {rubric_group_key: g}
"""
HISTORY = [{"author": "user", "content": {"role": "user", "parts": [{"text": "Earlier question"}]}}]


class FakeService:
    """`:evaluateInstances` on 127.0.0.1, recording every body: a computation input gets a computation result (1.0
    for an exact match of prediction and reference), anything else a metric result scripted by its response text."""

    def __init__(self) -> None:
        self.requests: list[dict] = []
        self.replies: dict[str, dict] = {}
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))))
                fake.requests.append({"path": self.path, "body": body})
                computed = next((k for k in ("exactMatchInput", "bleuInput", "rougeInput") if k in body), None)
                if computed:
                    pair = body[computed]["instances"][0]
                    payload = {"results": {"values": [{"score": float(pair["prediction"] == pair["reference"])}]}}
                else:
                    text = json.dumps(body["instance"].get("response", {}))
                    payload = next((r for k, r in fake.replies.items() if k in text), scored(0.5))
                reply(self, 200, json.dumps(payload).encode())

        self._loopback = LoopbackServer(Handler)
        self.url = self._loopback.url

    def close(self) -> None:
        self._loopback.close()


@pytest.fixture
def service(monkeypatch, tmp_path):
    server = FakeService()
    monkeypatch.setenv("GOOGLE_API_KEY", "fake-express-key")
    monkeypatch.setenv("GOOGLE_VERTEX_BASE_URL", server.url)
    adc = tmp_path / "adc.json"  # the SDK wants Application Default Credentials even with an API key
    adc.write_text(
        json.dumps({"type": "authorized_user", "client_id": "c", "client_secret": "s", "refresh_token": "r"})
    )
    monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(adc))
    monkeypatch.setenv("GOOGLE_CLOUD_PROJECT", "fake-project")
    yield server
    server.close()


def _cases():
    cases = [dict(c) for c in CASES]
    cases[0] = {**cases[0], "conversation_history": HISTORY}
    eval_set = parse_eval_set({"eval_cases": cases}, Path("basic-dataset.json")).eval_set
    return [(case, _invocation(case)) for case in eval_set.eval_cases]


def _ours(tmp_path) -> tuple[list[dict], dict]:
    config = parse_agents_cli_config(yaml.safe_load(CONFIG), tmp_path / "eval_config.yaml")
    criteria = resolve_agents_cli_metrics(config, {"general_quality": 0.6}, "eval-gate.yml", ("t",), None)
    judge = Judge(LlmClient(LlmSettings(retries=0), LlmCache(None)))
    runs = {case.eval_id: (case, CaseRun("basic-dataset", case.eval_id, 0, (inv,))) for case, inv in _cases()}
    jobs = [JudgeJob(("a", "basic-dataset", i), case, run, c) for i, (case, run) in runs.items() for c in criteria]
    judged = asyncio.run(judge_all(jobs, judge))
    scores = {
        i: {
            r.name: (r.score, r.status)
            for r in score_case(case, [run], criteria, judged[("a", "basic-dataset", i)]).criteria
        }
        for i, (case, run) in runs.items()
    }
    return scores


def _theirs(service) -> None:
    import agentplatform
    from agentplatform._genai import types as sdk

    client = agentplatform.Client(
        api_key="fake-express-key", http_options={"base_url": service.url, "api_version": "v1beta1"}
    )
    dataset = sdk.EvaluationDataset(
        eval_cases=[sdk.EvalCase.model_validate(generated_case(case, [inv])) for case, inv in _cases()]
    )
    entries = {m["name"]: m for m in yaml.safe_load(CONFIG)["custom_metrics"]}
    metrics = [
        "general_quality",  # agents-cli passes a bare name on to the SDK
        "multi_turn_general_quality",
        sdk.LLMMetric.model_validate(entries["judge"]),
        sdk.LLMMetric.model_validate({**entries["final_response_quality"], "name": "final_response_quality_v2"}),
        "safety_v3",
        sdk.CodeExecutionMetric.model_validate(
            {"name": "sandboxed", "custom_function": entries["sandboxed"]["custom_function"]}
        ),
        *(sdk.LLMMetric.model_validate({"name": name}) for name in ("exact_match", "bleu", "rouge_l_sum")),
    ]
    client.evals.evaluate(dataset=dataset, metrics=metrics)


def _bodies(service) -> list[str]:
    return sorted(json.dumps(r["body"], sort_keys=True) for r in service.requests)


def test_requests_are_the_sdks(service, tmp_path):
    scores = _ours(tmp_path)
    ours = _bodies(service)
    service.requests.clear()
    _theirs(service)
    theirs = _bodies(service)
    # shape_b has no reference: no computation request for it, on either side
    assert len(ours) == len(theirs) == 2 * 6 + 3
    assert ours == theirs
    names = [json.loads(b)["metrics"][0] for b in ours if "metrics" in json.loads(b)]
    assert sum("exactMatchInput" in json.loads(b) for b in ours) == 1
    assert {n.get("predefined_metric_spec", {}).get("metric_spec_name") for n in names} >= {
        "general_quality_v1",
        "multi_turn_general_quality_v1",
        "final_response_quality_v2",
        "safety_v3",
    }
    assert scores["shape_a"]["general_quality"] == (0.5, Status.FAILED)  # thresholds: {general_quality: 0.6}
    assert scores["shape_b"]["judge"] == (0.5, Status.PASSED)
    assert scores["shape_a"]["exact_match"] == (0.0, Status.PASSED)  # "Paris is the capital." is not "Paris"
    assert scores["shape_b"]["bleu"] == (None, Status.ERROR)  # no reference: the SDK's error too


def test_a_service_error_is_an_error_and_no_credentials_is_not_evaluated(service, tmp_path, monkeypatch):
    service.replies = {"Paris is the capital.": scored(error={"code": 3, "message": "bad instance"})}
    scores = _ours(tmp_path)
    assert scores["shape_a"]["judge"] == (None, Status.ERROR)
    monkeypatch.delenv("GOOGLE_API_KEY")
    monkeypatch.delenv("GOOGLE_CLOUD_PROJECT")
    assert _ours(tmp_path)["shape_a"]["judge"] == (None, Status.NOT_EVALUATED)
