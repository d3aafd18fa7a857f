"""The whole-conversation judges against ADK 2.13's own evaluators, on the same scripted fake-Gemini verdicts:
`rubric_based_multi_turn_trajectory_quality_v1` and `per_turn_user_simulator_quality_v1`."""

# ruff: noqa: E402  (google-adk is imported after the check that skips this module without it)
from __future__ import annotations

import asyncio
import json
from collections import Counter
from collections.abc import Callable

from tests.support.adk_required import adk

adk("evaluation")  # every test here compares with ADK's own evaluators: skip them all without it

from google.adk.evaluation.conversation_scenarios import ConversationScenario as AdkScenario
from google.adk.evaluation.eval_case import Invocation as AdkInvocation
from google.adk.evaluation.eval_metrics import (
    EvalMetric,
    LlmBackedUserSimulatorCriterion,
    RubricsBasedCriterion,
)
from google.adk.evaluation.eval_rubrics import Rubric as AdkRubric
from google.adk.evaluation.rubric_based_multi_turn_trajectory_evaluator import (
    RubricBasedMultiTurnTrajectoryEvaluator,
)
from google.adk.evaluation.simulation.per_turn_user_simulator_quality_v1 import PerTurnUserSimulatorQualityV1
from google.genai import types as genai_types

from adk_eval_gate.criteria import user_simulator_quality as quality
from adk_eval_gate.criteria.engine.criterion import ScoringInput
from adk_eval_gate.criteria.engine.judge import Judge
from adk_eval_gate.criteria.engine.options import RubricsOptions, UserSimulatorQualityOptions
from adk_eval_gate.criteria.multi_turn_trajectory import dialogue, score_multi_turn_trajectory
from adk_eval_gate.evalsets.adk_eval_schema import EvalCase, Invocation
from adk_eval_gate.llm.cache import LlmCache
from adk_eval_gate.llm.client import LlmClient, LlmSettings, LlmUnavailable
from tests.support.fake_gemini import FakeGemini, GeminiFault
from tests.unit.criteria.test_rubric_judges import block


def adk_invocations(turns: list[dict]) -> list[AdkInvocation]:
    """ADK's types keep tool declarations as genai Tools (its request interceptor records them so)."""
    invocations = [AdkInvocation.model_validate(t) for t in turns]
    for invocation in invocations:
        for details in invocation.app_details.agent_details.values():
            details.tool_declarations = [genai_types.Tool.model_validate(t) for t in details.tool_declarations]
    return invocations


def judge() -> Judge:
    return Judge(LlmClient(LlmSettings(retries=0), LlmCache(None)))


def turn(question: str, answer: str, *, tool: bool = False) -> dict:
    events = []
    if tool:
        events = [
            {
                "author": "dice",
                "content": {
                    "role": "model",
                    "parts": [
                        {"text": "Let me roll."},
                        {"function_call": {"name": "roll_die", "args": {"sides": 6}, "id": "c1"}},
                    ],
                },
            },
            {
                "author": "dice",
                "content": {
                    "role": "user",
                    "parts": [{"function_response": {"name": "roll_die", "response": {"result": 4}, "id": "c1"}}],
                },
            },
        ]
    return {
        "user_content": {"role": "user", "parts": [{"text": question}]},
        "final_response": {"role": "model", "parts": [{"text": answer}]},
        "intermediate_data": {"invocation_events": events},
        "app_details": {
            "agent_details": {
                "dice": {
                    "name": "dice",
                    "instructions": "Roll dice.",
                    "tool_declarations": [
                        {"function_declarations": [{"name": "roll_die", "description": "Rolls a die."}]}
                    ],
                }
            }
        },
    }


# ------------------------------------------------------------------ multi-turn trajectory

TRAJECTORY_RUBRICS = [
    {"rubric_id": "asked", "rubric_content": {"text_property": "The agent rolled when asked."}},
    {"rubric_id": "kind", "rubric_content": {"text_property": "The agent stayed friendly."}},
]
TRAJECTORY_SCRIPTS = {  # conversation tag → the judge's successive samples
    "conv-a": [block("asked", "x", "yes") + block("kind", "x", "yes")] * 3,
    "conv-b": [
        block("asked", "x", "yes") + block("kind", "x", "no"),
        block("asked", "x", "no") + block("kind", "x", "no"),
        block("asked", "x", "yes") + block("kind", "x", "yes"),
    ],
    "conv-c": [block("asked", "x", "no"), "no verdicts here", block(None, "The agent stayed friendly.", "yes")],
}
CONVERSATIONS = {
    "conv-a": [turn("conv-a: hello", "Hi!"), turn("roll please", "You got 4.", tool=True)],
    "conv-b": [turn("conv-b: roll", "You got 4.", tool=True)],
    "conv-c": [turn("conv-c: hi", "Hello."), turn("roll", "4", tool=True), turn("thanks", "Bye.")],
}


def by_tag(scripts: dict[str, list[str]]) -> Callable[[str], str]:
    counts: Counter = Counter()

    def reply(prompt: str) -> str:
        tag = next(t for t in scripts if t in prompt)
        counts[tag] += 1
        return scripts[tag][(counts[tag] - 1) % len(scripts[tag])]

    return reply


def test_multi_turn_trajectory_scores_equal_adks(gemini_env):
    mine_server, adk_server = FakeGemini(by_tag(TRAJECTORY_SCRIPTS)), FakeGemini(by_tag(TRAJECTORY_SCRIPTS))
    try:
        gemini_env(mine_server)
        options = RubricsOptions(threshold=0.5, rubrics=TRAJECTORY_RUBRICS, judge_model_options={"num_samples": 3})
        mine = {}
        for tag, turns in CONVERSATIONS.items():
            actual = [Invocation.model_validate(t) for t in turns]
            mine[tag] = asyncio.run(
                score_multi_turn_trajectory(
                    ScoringInput(EvalCase(eval_id=tag, conversation=actual), actual, None), options, judge()
                )
            )
        gemini_env(adk_server)
        criterion = RubricsBasedCriterion(
            threshold=0.5,
            rubrics=[AdkRubric.model_validate(r) for r in TRAJECTORY_RUBRICS],
            judge_model_options={"num_samples": 3},
        )
        for tag, turns in CONVERSATIONS.items():
            evaluator = RubricBasedMultiTurnTrajectoryEvaluator(
                EvalMetric(metric_name="m", threshold=0.5, criterion=criterion)
            )
            theirs = asyncio.run(evaluator.evaluate_invocations(adk_invocations(turns), None))
            assert mine[tag].score == theirs.overall_score, tag
            assert [p.score for p in mine[tag].per_invocation] == [p.score for p in theirs.per_invocation_results], tag
    finally:
        mine_server.close()
        adk_server.close()
    assert {tag: outcome.score for tag, outcome in mine.items()} == {"conv-a": 1.0, "conv-b": 0.5, "conv-c": 0.5}
    # one judge call per sample for the whole conversation, whatever its length
    assert len(mine_server.requests) == 3 * len(CONVERSATIONS)
    # the judge saw every turn, the tool call with its arguments and the tool's output
    prompt = next(r["prompt"] for r in mine_server.requests if "conv-c" in r["prompt"])
    for line in (
        'USER TURN 3: "thanks"',
        'AGENT (dice) TURN 2 (tool call): "roll_die({\\"sides\\": 6})"',
        'AGENT (dice) TURN 2 (tool output): "roll_die -> {\\"result\\": 4}"',
        "- roll_die: Rolls a die.",
    ):
        assert line in prompt, line


def test_dialogue_lines_follow_adks_assembly():
    evaluator = RubricBasedMultiTurnTrajectoryEvaluator(
        EvalMetric(
            metric_name="m",
            threshold=0.5,
            criterion=RubricsBasedCriterion(threshold=0.5, rubrics=[AdkRubric.model_validate(TRAJECTORY_RUBRICS[0])]),
        )
    )
    for turns in CONVERSATIONS.values():
        evaluator._assemble_dialogue_history(adk_invocations(turns))
        ours = "\n".join(f"{label}: {text}" for label, text in dialogue([Invocation.model_validate(t) for t in turns]))
        assert ours == evaluator._formatted_dialogue


# ------------------------------------------------------------------ per-turn user simulator quality

SCENARIO = {"starting_prompt": "Roll a die", "conversation_plan": "Ask for a roll, then say thanks and finish."}
STOP = "</finished>"
VALID, INVALID = json.dumps({"criteria": [], "is_valid": True}), '{"criteria": [], "is_valid": "False",}'
# the message a judge prompt is about → that judge's successive samples (ties count as invalid)
VERDICTS = {
    "msg-ok": [VALID, VALID, INVALID],
    "msg-tie": [VALID, INVALID, "no label at all", "still nothing"],
    "msg-bad": [INVALID, INVALID, VALID],
    STOP: [VALID, INVALID, INVALID],
}


def judged_message(prompt: str) -> str:
    """Which message a judge prompt is about: the known message that appears last in its material."""
    material = prompt.split("<<<end of material>>>")[0]
    return max((m for m in VERDICTS if m in material), key=material.rindex)


def per_message(verdicts: dict[str, list[str]]) -> Callable[[str], str]:
    counts: Counter = Counter()

    def reply(prompt: str) -> str:
        message = judged_message(prompt)
        counts[message] += 1
        return verdicts[message][(counts[message] - 1) % len(verdicts[message])]

    return reply


def simulated(first: str, *later: str) -> list[dict]:
    return [turn(first, "Rolled a 4."), *(turn(text, "Sure.") for text in later)]


CONVERSATIONS_WITH_SIMULATOR = {
    "all-good": simulated("Roll a die", "msg-ok"),
    "bad-start": simulated("  roll a die ", "msg-ok"),
    "tie": simulated("Roll a die", "msg-tie", "msg-ok"),
    "bad-middle": simulated("Roll a die", "msg-bad", "msg-ok"),
    "one-turn": simulated("Roll a die"),
}


def test_user_simulator_quality_scores_equal_adks(gemini_env):
    options = UserSimulatorQualityOptions(threshold=0.5, judge_model_options={"num_samples": 3})
    adk_criterion = LlmBackedUserSimulatorCriterion(threshold=0.5, judge_model_options={"num_samples": 3})
    results = {}
    for name, turns in CONVERSATIONS_WITH_SIMULATOR.items():
        # a fresh pair of servers per conversation: both sides see the same sample sequence per message
        mine_server, adk_server = FakeGemini(per_message(VERDICTS)), FakeGemini(per_message(VERDICTS))
        try:
            gemini_env(mine_server)
            actual = [Invocation.model_validate(t) for t in turns]
            case = EvalCase.model_validate({"eval_id": name, "conversation_scenario": SCENARIO})
            mine = asyncio.run(quality.score_user_simulator_quality(ScoringInput(case, actual, None), options, judge()))
            gemini_env(adk_server)
            evaluator = PerTurnUserSimulatorQualityV1(
                EvalMetric(metric_name=quality.NAME, threshold=0.5, criterion=adk_criterion)
            )
            theirs = asyncio.run(
                evaluator.evaluate_invocations(
                    [AdkInvocation.model_validate(t) for t in turns], None, AdkScenario.model_validate(SCENARIO)
                )
            )
        finally:
            mine_server.close()
            adk_server.close()
        assert mine.score == theirs.overall_score, name
        assert [p.score for p in mine.per_invocation] == [p.score for p in theirs.per_invocation_results], name
        results[name] = mine.score
    # the stop-signal check fails (1 valid of 3) and replaces the last turn; a tie is invalid
    assert results == {"all-good": 0.5, "bad-start": 0.0, "tie": 1 / 3, "bad-middle": 1 / 3, "one-turn": 0.0}


def test_labels_parse_like_adks():
    from google.adk.evaluation.llm_as_judge_utils import Label
    from google.adk.evaluation.simulation.per_turn_user_simulator_quality_v1 import _parse_llm_response

    expected = {Label.VALID: 1.0, Label.INVALID: 0.0, Label.NOT_FOUND: None}
    for text in [
        '{"is_valid": true}',
        '{"is_valid": True,}',
        '"is_valid": "VALID"\n',
        '"is_valid": ["almost"]}',
        '"is_valid": partially valid,',
        '"is_valid": "maybe"}',
        "nothing",
        '"is_valid": "False",}',
        '{"is_valid":false}',
    ]:
        assert quality.parse_label(text) == expected[_parse_llm_response(text)], text


def test_scenario_is_required_and_a_failed_judge_call_fails_the_criterion(gemini_env):
    options = UserSimulatorQualityOptions(threshold=0.5, judge_model_options={"num_samples": 1})
    actual = [Invocation.model_validate(t) for t in simulated("Roll a die", "msg-ok")]
    from adk_eval_gate.criteria.engine.criterion import NotEvaluable

    try:
        asyncio.run(
            quality.score_user_simulator_quality(
                ScoringInput(EvalCase(eval_id="x", conversation=actual), actual, actual), options, judge()
            )
        )
    except NotEvaluable as exc:
        assert "conversation_scenario" in str(exc)
    else:
        raise AssertionError("expected NotEvaluable")
    server = FakeGemini(per_message(VERDICTS))
    server.faults.append(GeminiFault("msg-ok", status=503, times=5))
    gemini_env(server)
    try:
        case = EvalCase.model_validate({"eval_id": "x", "conversation_scenario": SCENARIO})
        outcome = asyncio.run(quality.score_user_simulator_quality(ScoringInput(case, actual, None), options, judge()))
    except LlmUnavailable as exc:  # judging.py turns it into the criterion's `error`
        assert "judge unavailable after" in str(exc) and "503" in str(exc) and exc.cause == "judge_unavailable"
    else:
        raise AssertionError(f"expected LlmUnavailable, got {outcome}")
    finally:
        server.close()
