"""Our deterministic criteria against google-adk 2.13.0's evaluators on generated data: |ours - ADK| <= 1e-9."""

from __future__ import annotations

import json
import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from adk_eval_gate.criteria.engine.criterion import ScoringInput
from adk_eval_gate.criteria.engine.options import ThresholdOptions, ToolTrajectoryOptions
from adk_eval_gate.criteria.engine.rouge_tokenizer import tokenize_text
from adk_eval_gate.criteria.response_match import rouge1_f, score_response_match
from adk_eval_gate.criteria.tool_trajectory import score_tool_trajectory
from adk_eval_gate.evalsets.adk_eval_schema import EvalCase, Invocation
from tests.parity.generators import WORDS, conversation_pair, text

from .adk_oracle import ADK_TOKENIZER, adk_rouge, adk_trajectory

MATCH_TYPES = ["EXACT", "IN_ORDER", "ANY_ORDER"]
TOLERANCE = 1e-9


def ours(data):
    return [Invocation.model_validate_json(json.dumps(item)) for item in data]


def scoring_input(actual, expected) -> ScoringInput:
    case = EvalCase(eval_id="c", conversation=ours(expected))
    return ScoringInput(case, ours(actual), ours(expected))


def assert_same(our, adk):
    assert (our.score is None) == (adk.overall_score is None)
    if our.score is not None:
        assert abs(our.score - adk.overall_score) <= TOLERANCE
    assert our.status.value.upper() == adk.overall_eval_status.name
    assert len(our.per_invocation) == len(adk.per_invocation_results)
    for mine, theirs in zip(our.per_invocation, adk.per_invocation_results, strict=True):
        assert abs(mine.score - theirs.score) <= TOLERANCE
        assert mine.status.value.upper() == theirs.eval_status.name


@pytest.mark.parametrize("match_type", MATCH_TYPES)
@pytest.mark.parametrize("ignore_args", [False, True])
def test_trajectory_matches_adk_on_generated_corpus(match_type, ignore_args):
    rng = random.Random(f"{match_type}-{ignore_args}")
    outcomes = set()
    for _ in range(1500):
        actual, expected = conversation_pair(rng)
        threshold = rng.choice([1.0, 0.5, 0.0, 0.75])
        mine = score_tool_trajectory(
            scoring_input(actual, expected),
            ToolTrajectoryOptions(threshold=threshold, match_type=match_type, ignore_args=ignore_args),
        )
        assert_same(mine, adk_trajectory(actual, expected, match_type, ignore_args, threshold))
        outcomes.add(mine.score)
    # the corpus must exercise both verdicts and partial means, or it proves nothing
    assert {0.0, 1.0} <= outcomes and any(0 < s < 1 for s in outcomes)


def test_rouge_matches_adk_on_generated_corpus():
    rng = random.Random("rouge")
    scores = set()
    for _ in range(1500):
        actual, expected = conversation_pair(rng)
        threshold = rng.choice([0.8, 0.5, 0.0, 1.0])
        mine = score_response_match(scoring_input(actual, expected), ThresholdOptions(threshold=threshold))
        assert_same(mine, adk_rouge(actual, expected, threshold))
        scores.add(round(mine.score, 3))
    assert len(scores) > 50


@settings(max_examples=400, derandomize=True, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(max_size=80))
def test_tokenizer_matches_adk_on_arbitrary_unicode(value):
    assert list(tokenize_text(value)) == ADK_TOKENIZER.tokenize(value)


@settings(max_examples=400, derandomize=True, deadline=None)
@given(
    st.lists(st.sampled_from(WORDS), max_size=12).map(" ".join),
    st.lists(st.sampled_from(WORDS), max_size=12).map(" ".join),
)
def test_rouge_f_matches_adk_on_word_soup(response, reference):
    actual = [
        {
            "user_content": {"role": "user", "parts": [{"text": "q"}]},
            "final_response": {"role": "model", "parts": [{"text": response}]},
        }
    ]
    expected = [
        {
            "user_content": {"role": "user", "parts": [{"text": "q"}]},
            "final_response": {"role": "model", "parts": [{"text": reference}]},
        }
    ]
    assert abs(rouge1_f(response, reference) - adk_rouge(actual, expected).overall_score) <= TOLERANCE


@pytest.mark.parametrize(
    ("response", "reference", "expected"),
    [
        ("The weather in Paris is sunny.", "It is sunny in Paris.", 0.7272727272727272),
        ("This is a test candidate response.", "This is a test reference.", 8 / 11),
        ("", "", 0.0),
        ("anything", "", 0.0),
        ("", "anything", 0.0),
        ("สวัสดีครับ", "สวัสดีครับ", 1.0),
        ("he rolls dice", "he rolled dice", 1.0),
        ("HELLO, world!!", "hello world", 1.0),
    ],
)
def test_rouge_known_values(response, reference, expected):
    assert rouge1_f(response, reference) == pytest.approx(expected, abs=1e-12)


def test_tokenizer_edge_scripts_match_adk():
    rng = random.Random(7)
    samples = [text(rng) for _ in range(3000)] + WORDS + ["ﬁ", "²", "Ａ", "İstanbul", "ǅ", "\u0e01\u0e34\u0e4a"]
    for sample in samples:
        assert list(tokenize_text(sample)) == ADK_TOKENIZER.tokenize(sample), sample
