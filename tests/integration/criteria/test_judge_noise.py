"""Judge noise: every judgement kept, turns whose judgements disagree re-judged within the spending limit, the flip
rate per case × criterion in the results — the real google-genai client against a fake Gemini on 127.0.0.1, scripted
to disagree with itself on one invocation (docs/judge-noise.md)."""

from __future__ import annotations

import asyncio
import json
import re
from collections import Counter
from collections.abc import Callable

import pytest

from adk_eval_gate.core.keys import CaseKey
from adk_eval_gate.criteria.engine.criterion import ConfiguredCriterion
from adk_eval_gate.criteria.engine.judge import Judge
from adk_eval_gate.criteria.engine.judging import JudgeJob, judge_all
from adk_eval_gate.criteria.engine.options import LlmJudgeOptions, RubricsOptions
from adk_eval_gate.criteria.judge_agreement import RejudgePolicy
from adk_eval_gate.criteria.registry import REGISTRY
from adk_eval_gate.evalsets.adk_eval_schema import EvalCase, Invocation
from adk_eval_gate.llm.cache import LlmCache
from adk_eval_gate.llm.client import LlmClient, LlmSettings
from adk_eval_gate.results.judge_noise import judge_noise
from adk_eval_gate.run.pipeline import run_plan
from adk_eval_gate.run.plan import build_plan
from adk_eval_gate.targets.case_run import CaseRun
from tests.support.fake_gemini import FakeGemini, verdict

# The scripted truth: the judge calls the "No prime" answer valid 2 times in 5 (q = 0.4, so two judgements of it
# disagree with chance 2q(1−q) = 0.48), every other answer valid every time.
WOBBLY = ["valid", "invalid", "invalid", "valid", "invalid"]


def wobbly_judge() -> Callable[[str], str]:
    """Per distinct prompt, the replies in turn: the wobbly answer cycles through WOBBLY, the rest are valid."""
    counts: Counter[str] = Counter()

    def reply(prompt: str) -> str:
        answer = json.loads(re.search(r'"Agent response": (".*?")', prompt).group(1))
        counts[prompt] += 1
        if "No prime" not in answer:
            return verdict("valid")
        return verdict(WOBBLY[(counts[prompt] - 1) % len(WOBBLY)])

    return reply


def noisy_example(example, run: str) -> object:
    config = example / "replay.yml"
    config.write_text(
        config.read_text().replace(
            "    eval_config: evals/eval_config.json\n",
            "    criteria: {final_response_match_v2: {threshold: 0.5, judge_model_options: {num_samples: 5}}}\n",
        )
        + f"judge: {{cache: null, retries: 0}}\nrun: {run}\n"
    )
    return config


def metrics(results) -> dict:
    return {c.eval_id: c.metrics["final_response_match_v2"] for c in results.eval_sets[0].cases}


def test_disagreeing_turns_are_rejudged_and_the_flip_rate_recorded_without_moving_adks_score(example, gemini_env):
    server = FakeGemini(wobbly_judge())
    gemini_env(server)
    try:
        results = run_plan(build_plan(noisy_example(example, "{rejudge: 5}")), quiet=True)
    finally:
        server.close()
    found = metrics(results)
    noisy = found["primes_paraphrased"]
    # ADK's score: the majority of the first 5 (2 valid of 5), untouched by the 5 re-judgements
    assert noisy.score == 0.0 and noisy.status == "failed"
    turn = noisy.runs[0].per_invocation[0]
    assert sorted(turn.judgements[:5]) == [0.0, 0.0, 0.0, 1.0, 1.0] and len(turn.judgements) == 10
    assert turn.rejudged == 5 and turn.unjudged is None
    # 10 judgements, 4 valid: 4 × 6 of the 45 pairs disagree (the scripted truth is 0.48)
    assert noisy.judge_noise.flip_rate == pytest.approx(24 / 45)
    assert (noisy.judge_noise.judgements, noisy.judge_noise.rejudged, noisy.judge_noise.pairs) == (10, 5, 45)
    # unanimous turns are not re-judged, and their judge never flips
    steady = found["roll_6"]
    assert steady.judge_noise.flip_rate == 0.0 and steady.judge_noise.rejudged == 0
    assert steady.runs[0].per_invocation[0].judgements == [1.0] * 5
    assert len(server.requests) == 7 * 5 + 5  # 7 turns × num_samples, and 5 more for the one that disagreed


def test_without_rejudging_the_flip_rate_comes_from_num_samples_alone(example, gemini_env):
    server = FakeGemini(wobbly_judge())
    gemini_env(server)
    try:
        results = run_plan(build_plan(noisy_example(example, "{rejudge: 0}")), quiet=True)
    finally:
        server.close()
    noisy = metrics(results)["primes_paraphrased"]
    assert noisy.score == 0.0 and noisy.judge_noise.rejudged == 0
    assert noisy.judge_noise.flip_rate == pytest.approx(6 / 10)  # 2 valid, 3 invalid: 6 of 10 pairs disagree
    assert len(server.requests) == 7 * 5


def test_the_spending_limit_stops_rejudging_and_says_so_while_the_score_stands(example, gemini_env):
    server = FakeGemini(wobbly_judge())
    gemini_env(server)
    try:
        # the first judging alone spends more than this: every extra judgement is refused
        results = run_plan(build_plan(noisy_example(example, "{rejudge: 5, max_cost_usd: 0.0000001}")), quiet=True)
    finally:
        server.close()
    noisy = metrics(results)["primes_paraphrased"]
    assert noisy.score == 0.0 and noisy.status == "failed"  # ADK's score needs no re-judgement
    turn = noisy.runs[0].per_invocation[0]
    assert len(turn.judgements) == 5 and turn.rejudged == 0
    assert "run.max_cost_usd" in turn.unjudged and "re-judging stopped" in turn.unjudged
    assert noisy.judge_noise.unjudged == 1 and "run.max_cost_usd" in noisy.judge_noise.unjudged_reason
    assert len(server.requests) == 7 * 5  # no call past the limit


def test_rejudging_asks_before_every_call_and_stops_where_it_is_refused(gemini_env):
    """The policy is asked before each extra call: allowing two, the turn gets exactly two more judgements."""
    replies = iter(["valid", "invalid", "valid", "valid", "invalid", "invalid"])
    server = FakeGemini(lambda prompt: verdict(next(replies, "valid")))
    calls: list[int] = []

    def refusal() -> str | None:
        calls.append(1)
        return "budget reached" if len(calls) > 2 else None

    gemini_env(server)
    try:
        expected = [Invocation.model_validate(turn("reference"))]
        actual = [Invocation.model_validate(turn("an answer"))]
        case = EvalCase(eval_id="c", conversation=expected)
        options = LlmJudgeOptions(threshold=0.5, judge_model_options={"num_samples": 3})
        criterion = ConfiguredCriterion(REGISTRY["final_response_match_v2"], options)
        job = JudgeJob(CaseKey("a", "s", "c"), case, CaseRun("s", "c", 0, tuple(actual)), criterion)
        judge = Judge(LlmClient(LlmSettings(retries=0), LlmCache(None)), rejudge=RejudgePolicy(5, refusal))
        outcome = asyncio.run(judge_all([job], judge))[CaseKey("a", "s", "c")][(0, "final_response_match_v2")]
    finally:
        server.close()
    item = outcome.per_invocation[0]
    assert outcome.score == 1.0  # valid, invalid, valid: ADK's majority
    # the first three in any order (asked at once), then the two re-judgements in turn
    assert sorted(item.judgements[:3]) == [0.0, 1.0, 1.0] and item.judgements[3:] == (1.0, 0.0)
    assert item.rejudged == 2
    assert item.unjudged == "budget reached" and len(server.requests) == 5


def turn(answer: str) -> dict:
    return {
        "user_content": {"role": "user", "parts": [{"text": "question"}]},
        "final_response": {"role": "model", "parts": [{"text": answer}]},
    }


def rubric_block(rubric_id: str, verdict_text: str) -> str:
    return (
        f"ID: {rubric_id}\nProperty: The response is {rubric_id}.\nEvidence: x\nRationale: r\nVerdict: {verdict_text}\n"
    )


def test_a_rubric_judges_samples_are_judgements_of_the_turn_and_are_rejudged_alike(gemini_env):
    """One rubric sample's judgement is the mean of its rubric verdicts; ADK's per-rubric majority stays the score."""
    replies = [
        rubric_block("concise", "yes") + rubric_block("polite", "yes"),
        rubric_block("concise", "yes") + rubric_block("polite", "no"),
        rubric_block("concise", "no") + rubric_block("polite", "no"),
    ]
    counts: Counter[str] = Counter()

    def reply(prompt: str) -> str:
        counts["all"] += 1
        return replies[(counts["all"] - 1) % 3]

    server = FakeGemini(reply)
    gemini_env(server)
    rubrics = [
        {"rubric_id": r, "rubric_content": {"text_property": f"The response is {r}."}} for r in ("concise", "polite")
    ]
    try:
        actual = (Invocation.model_validate(turn("an answer")),)
        case = EvalCase(eval_id="c", conversation=list(actual))
        options = RubricsOptions(threshold=0.5, rubrics=rubrics, judge_model_options={"num_samples": 3})
        name = "rubric_based_final_response_quality_v1"
        job = JudgeJob(
            CaseKey("a", "s", "c"), case, CaseRun("s", "c", 0, actual), ConfiguredCriterion(REGISTRY[name], options)
        )
        judge = Judge(LlmClient(LlmSettings(retries=0), LlmCache(None)), rejudge=RejudgePolicy(3, lambda: None))
        outcome = asyncio.run(judge_all([job], judge))[CaseKey("a", "s", "c")][(0, name)]
    finally:
        server.close()
    item = outcome.per_invocation[0]
    assert outcome.score == 0.5  # concise yes, yes, no → yes; polite yes, no, no → no
    assert sorted(item.judgements[:3]) == [0.0, 0.5, 1.0] and item.judgements[3:] == (1.0, 0.5, 0.0)
    noise = judge_noise([outcome])
    assert noise is not None and noise.rejudged == 3 and noise.pairs == 15
    assert noise.flip_rate == pytest.approx(8 / 15)  # |a − b| summed over the 15 pairs of {1, 1, ½, ½, 0, 0}
    assert len(server.requests) == 6
