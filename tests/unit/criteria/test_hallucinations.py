"""hallucinations_v1 against ADK 2.13's own evaluator, with the same scripted segmenter and validator replies."""

# ruff: noqa: E402  (google-adk is imported after the check that skips this module without it)
from __future__ import annotations

import asyncio
import re

from tests.support.adk_required import adk

adk("evaluation")  # every test here compares with ADK's own evaluators: skip them all without it

from google.adk.evaluation.eval_case import Invocation as AdkInvocation
from google.adk.evaluation.eval_metrics import EvalMetric, HallucinationsCriterion
from google.adk.evaluation.hallucinations_v1 import HallucinationsV1Evaluator

from adk_eval_gate.criteria.engine.criterion import ScoringInput, UnparseableReply
from adk_eval_gate.criteria.engine.judge import Judge
from adk_eval_gate.criteria.engine.options import HallucinationsOptions
from adk_eval_gate.criteria.hallucinations import score_hallucinations, steps
from adk_eval_gate.evalsets.adk_eval_schema import EvalCase, Invocation
from adk_eval_gate.llm.cache import LlmCache
from adk_eval_gate.llm.client import LlmClient, LlmSettings
from tests.support.fake_gemini import FakeGemini

LABELS = {
    "zqsup": "supported",
    "zquns": "unsupported",
    "zqcon": "contradictory",
    "zqdis": "disputed",
    "zqnap": "not_applicable",
    "zqodd": "maybe",
}
TOKEN = re.compile(r"zq[a-z]{3}\d+")


def reply(prompt: str) -> str:
    tokens = list(dict.fromkeys(TOKEN.findall(prompt)))
    if "supporting_excerpt" in prompt:  # the validator
        return "\n".join(
            f"sentence: Claim {t}.\nlabel: {LABELS[t[:5]]}\nrationale: r\nsupporting_excerpt: null\n"
            f"contradicting_excerpt: null"
            for t in tokens
        )
    if "nothingtosplit" in prompt:
        return "I could not split it."
    return "\n".join(f"<sentence>Claim {t}.</sentence>" for t in tokens)  # the segmenter


def invocation(final: str, events: list | None = None) -> dict:
    data = {
        "user_content": {"role": "user", "parts": [{"text": "question"}]},
        "final_response": {"role": "model", "parts": [{"text": final}]},
    }
    data["intermediate_data"] = {
        "invocation_events": events
        or [
            {
                "author": "agent",
                "content": {"role": "model", "parts": [{"function_call": {"name": "lookup", "args": {"q": 1}}}]},
            },
            {
                "author": "agent",
                "content": {"role": "user", "parts": [{"function_response": {"name": "lookup", "response": {"r": 2}}}]},
            },
        ]
    }
    return data


CASES = [
    ["Claim zqsup1. Claim zquns2. Claim zqnap3."],
    ["Claim zqcon1. Claim zqdis2."],
    ["Claim zqodd1."],
    ["nothingtosplit"],
    ["Claim zqsup1.", "Claim zquns1. Claim zqsup2.", "nothingtosplit"],
]


def test_scores_equal_adks(gemini_env):
    mine_server, adk_server = FakeGemini(reply), FakeGemini(reply)
    try:
        gemini_env(mine_server)
        options = HallucinationsOptions(threshold=0.5)
        mine = []
        for finals in CASES:
            actual = [Invocation.model_validate(invocation(f)) for f in finals]
            client = Judge(LlmClient(LlmSettings(retries=0), LlmCache(None)))
            try:
                mine.append(
                    asyncio.run(
                        score_hallucinations(
                            ScoringInput(EvalCase(eval_id="c", conversation=actual), actual, None), options, client
                        )
                    )
                )
            except UnparseableReply as exc:  # ADK reports a quiet NOT_EVALUATED; the gate errors (judging.py)
                assert "no sentence could be checked" in str(exc)
                mine.append(None)
        gemini_env(adk_server)
        for finals, result in zip(CASES, mine, strict=True):
            evaluator = HallucinationsV1Evaluator(
                EvalMetric(
                    metric_name="hallucinations_v1", threshold=0.5, criterion=HallucinationsCriterion(threshold=0.5)
                )
            )
            actual = [AdkInvocation.model_validate(invocation(f)) for f in finals]
            theirs = asyncio.run(evaluator.evaluate_invocations(actual, None))
            if result is None:
                assert theirs.overall_score is None and theirs.overall_eval_status.name == "NOT_EVALUATED", finals
                continue
            assert result.score == theirs.overall_score, finals
            assert [p.score for p in result.per_invocation] == [p.score for p in theirs.per_invocation_results], finals
    finally:
        mine_server.close()
        adk_server.close()
    assert [m and m.score for m in mine] == [2 / 3, 0.0, None, None, 0.75]


def test_step_selection_matches_adk():
    events = [
        {
            "author": "a",
            "content": {
                "role": "model",
                "parts": [{"text": "Let me look."}, {"function_call": {"name": "t", "args": {}}}],
            },
        },
        {
            "author": "a",
            "content": {"role": "user", "parts": [{"function_response": {"name": "t", "response": {"x": 1}}}]},
        },
        {
            "author": "b",
            "content": {"role": "model", "parts": [{"text": "Found it."}, {"text": "Second part."}]},
            "grounding_metadata": {"web_search_queries": ["q"]},
        },
        {"author": "b", "content": None},
    ]
    for intermediate in (False, True):
        ours = [text for text, _ in steps(Invocation.model_validate(invocation("Final answer.", events)), intermediate)]
        evaluator = HallucinationsV1Evaluator(
            EvalMetric(
                metric_name="hallucinations_v1",
                threshold=0.5,
                criterion=HallucinationsCriterion(threshold=0.5, evaluate_intermediate_nl_responses=intermediate),
            )
        )
        theirs = [
            s.nl_response
            for s in evaluator._get_steps_to_evaluate(AdkInvocation.model_validate(invocation("Final answer.", events)))
        ]
        assert ours == theirs
