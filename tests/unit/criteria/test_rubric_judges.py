"""Rubric-judged criteria against ADK 2.13's own parser, normaliser and evaluators, on the same judge outputs."""

# ruff: noqa: E402  (google-adk is imported after the check that skips this module without it)
from __future__ import annotations

import asyncio
import random

from tests.support.adk_required import adk

adk("evaluation")  # every test here compares with ADK's own evaluators: skip them all without it

from google.adk.evaluation.eval_case import Invocation as AdkInvocation
from google.adk.evaluation.eval_metrics import EvalMetric, RubricsBasedCriterion
from google.adk.evaluation.eval_rubrics import Rubric as AdkRubric
from google.adk.evaluation.rubric_based_evaluator import DefaultAutoRaterResponseParser, _normalize_text
from google.adk.evaluation.rubric_based_final_response_quality_v1 import (
    RubricBasedFinalResponseQualityV1Evaluator,
)
from google.adk.evaluation.rubric_based_tool_use_quality_v1 import RubricBasedToolUseV1Evaluator

from adk_eval_gate.criteria import rubrics as ours
from adk_eval_gate.criteria.engine.criterion import ScoringInput
from adk_eval_gate.criteria.engine.judge import Judge
from adk_eval_gate.criteria.engine.options import RubricsOptions
from adk_eval_gate.evalsets.adk_eval_schema import EvalCase, Invocation
from adk_eval_gate.llm.cache import LlmCache
from adk_eval_gate.llm.client import LlmClient, LlmSettings
from tests.support.fake_gemini import FakeGemini, cycling

RUBRICS = [
    {"rubric_id": "concise", "rubric_content": {"text_property": "The response is concise."}},
    {"rubric_id": "polite", "rubric_content": {"text_property": "The response is “polite”."}},
]


def block(rubric_id: str | None, prop: str, verdict: str) -> str:
    head = f"ID: {rubric_id}\n" if rubric_id else ""
    return f"{head}Property: {prop}\nEvidence: x\nRationale: because\nVerdict: {verdict}\n"


def test_parser_and_normaliser_match_adk():
    rng = random.Random(9)
    pieces = [
        block("concise", "The response is concise.", "yes"),
        block(None, '**the response is "polite".**', "No."),
        block("polite", "whatever", "unknown"),
        "Property: dangling\n",
        "Verdict: yes\n",
        "Rationale: r\n",
        block("x", "Other", "**Verdict:** yes"),
        "  ID: spaced\n  Property: p\nRationale: r\nVerdict: YES\n",
        "noise\n",
    ]
    adk = DefaultAutoRaterResponseParser()
    for _ in range(500):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 5)))
        theirs = [(r.rubric_id, r.property_text, r.rationale, r.score) for r in adk.parse(text)]
        mine = [(v.rubric_id, v.property_text, v.rationale, v.score) for v in ours.parse(text)]
        assert mine == theirs, text
    for text in [
        "The response is “polite”.",
        "  **`#> -• The  response\tis concise.'\" ",
        "ＦＵＬＬＷＩＤＴＨ",
        None,
        3,
    ]:
        assert ours.normalize(text) == _normalize_text(text)


SAMPLES = {
    "one": [
        block("concise", "x", "yes") + block("polite", "x", "yes"),
        block("concise", "x", "no") + block("polite", "x", "yes"),
        block("concise", "x", "yes") + block("polite", "x", "no"),
    ],
    "two": [
        block(None, "The response is concise.", "no") + block(None, 'the response is "polite".', "yes"),
        block("concise", "x", "yes"),
        "garbage without verdicts",
    ],
    "three": [block("concise", "x", "yes"), block("concise", "x", "no"), block("polite", "x", "maybe")],
}


def scripted() -> FakeGemini:
    return FakeGemini(cycling(SAMPLES, "question {}"))


def inv(answer: str, rubrics=None) -> dict:
    marker = answer.split()[-1]
    data = {
        "user_content": {"role": "user", "parts": [{"text": f"question {marker}"}]},
        "final_response": {"role": "model", "parts": [{"text": answer}]},
        "intermediate_data": {"tool_uses": [{"name": "roll_die", "args": {"sides": 6}}]},
    }
    if rubrics:
        data["rubrics"] = rubrics
    return data


def test_rubric_scores_equal_adks(gemini_env):
    cases = [["one"], ["two"], ["three"], ["one", "two", "three"]]
    scores = {}
    for adk_class, our_scorer in (
        (RubricBasedFinalResponseQualityV1Evaluator, ours.score_final_response_quality),
        (RubricBasedToolUseV1Evaluator, ours.score_tool_use_quality),
    ):
        mine_server, adk_server = scripted(), scripted()
        try:
            gemini_env(mine_server)
            options = RubricsOptions(threshold=0.5, rubrics=RUBRICS, judge_model_options={"num_samples": 3})
            mine = []
            for markers in cases:
                actual = [Invocation.model_validate(inv(f"answer {m}")) for m in markers]
                client = Judge(LlmClient(LlmSettings(retries=0), LlmCache(None)))
                data = ScoringInput(EvalCase(eval_id="c", conversation=actual), actual, actual)
                mine.append(asyncio.run(our_scorer(data, options, client)))
            gemini_env(adk_server)
            criterion = RubricsBasedCriterion(
                threshold=0.5,
                rubrics=[AdkRubric.model_validate(r) for r in RUBRICS],
                judge_model_options={"num_samples": 3},
            )
            for markers, result in zip(cases, mine, strict=True):
                metric = EvalMetric(metric_name="m", threshold=0.5, criterion=criterion)
                evaluator = adk_class(metric)
                actual = [AdkInvocation.model_validate(inv(f"answer {m}")) for m in markers]
                theirs = asyncio.run(evaluator.evaluate_invocations(actual, actual))
                assert result.score == theirs.overall_score, (adk_class.__name__, markers)
                assert [p.score for p in result.per_invocation] == [p.score for p in theirs.per_invocation_results]
        finally:
            mine_server.close()
            adk_server.close()
        scores[adk_class.__name__] = [m.score for m in mine]
    # per-rubric majority with ties negative; the 3-invocation case is the flattened mean of all six verdicts
    for name, values in scores.items():
        assert values == [1.0, 0.5, 0.0, 0.6], name


def test_case_and_invocation_rubrics_need_the_right_type(gemini_env):
    case = EvalCase.model_validate(
        {
            "eval_id": "c",
            "conversation": [inv("answer one")],
            "rubrics": [
                {
                    "rubric_id": "concise",
                    "rubric_content": {"text_property": "The response is concise."},
                    "type": "FINAL_RESPONSE_QUALITY",
                },
                {
                    "rubric_id": "polite",
                    "rubric_content": {"text_property": "The response is polite."},
                    "type": "TOOL_USE_QUALITY",
                },
            ],
        }
    )
    chosen = ours.effective_rubrics([], case, case.conversation[0], "FINAL_RESPONSE_QUALITY")
    assert [r.rubric_id for r in chosen] == ["concise"]
    for rubric_list in ([], [chosen[0], chosen[0]]):
        try:
            ours.effective_rubrics(rubric_list, EvalCase(eval_id="c", conversation=case.conversation), None, "X")
        except ValueError as exc:
            assert "rubric" in str(exc)
        else:
            raise AssertionError("expected NotEvaluable")
