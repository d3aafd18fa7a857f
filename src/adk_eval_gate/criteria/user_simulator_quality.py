"""`per_turn_user_simulator_quality_v1`: did the user simulator play its part? (ADK 2.13 rules.)

* Turn 1 needs no judge: 1 when the user text equals the scenario's starting prompt (both stripped), else 0.
* Every later turn: `num_samples` judge samples on the plan, the history before the turn (user text and the
  agent's final response per turn) and the new user message; `"is_valid"` parsed with ADK's pattern (lower-cased,
  so true/valid pass and false/invalid/almost/partially fail), majority vote with ties invalid.
* One more judged "turn" whose message is the stop signal, against the whole conversation: when it fails it
  replaces the last turn's result.
* Score: the sum of the scores of passed turns over the number of turns (unscored turns count in the denominator).
A judge call that cannot be made fails the whole criterion (an `error`, or `not_evaluated` without credentials or
budget; judging.py decides); so do judged turns of which not one reply could be parsed.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from adk_eval_gate.criteria.engine.criterion import (
    InvocationScore,
    MetricOutcome,
    NotEvaluable,
    ScoringInput,
    Status,
    UnparseableReply,
    status_for,
)
from adk_eval_gate.criteria.engine.judge import Judge, gather_all
from adk_eval_gate.criteria.engine.options import UserSimulatorQualityOptions
from adk_eval_gate.criteria.final_response_match_v2 import majority  # the same vote: majority, ties invalid
from adk_eval_gate.evalsets.adk_eval_schema import ConversationScenario, Invocation, content_text
from adk_eval_gate.evalsets.personas import PersonaUnavailable, fill_persona, resolve_persona

NAME = "per_turn_user_simulator_quality_v1"
VERSION = "1"
_IS_VALID = re.compile(r'"is_valid":\s*\[*[\n\s]*"*([^"\]]*)"*[\n\s]*\]*\s*[,\n\}]')
_INVALID = {"invalid", "almost", "false", "partially_valid", "partially valid", "partially"}


def parse_label(text: str | None) -> float | None:
    if not text:
        return None
    found = _IS_VALID.search(text)
    if found is None:
        return None
    label = found.group(1).strip("}").replace(",", "").strip().lower()
    if label in _INVALID:
        return 0.0
    return 1.0 if label in ("valid", "true") else None


def history(invocations: Sequence[Invocation]) -> list[tuple[str, str]]:
    lines = []
    for invocation in invocations:
        if invocation.user_content is not None and invocation.user_content.parts:
            lines.append(("user", content_text(invocation.user_content)))
        if invocation.final_response is not None:
            lines.append((invocation.final_response.role or "None", content_text(invocation.final_response)))
    return lines


async def score_user_simulator_quality(
    data: ScoringInput, options: UserSimulatorQualityOptions, judge: Judge
) -> MetricOutcome:
    scenario: ConversationScenario | None = data.case.conversation_scenario
    if scenario is None:
        raise NotEvaluable("needs a conversation_scenario (this criterion judges the user simulator)")
    if not data.actual:
        raise NotEvaluable("no actual invocations")
    try:
        persona = resolve_persona(scenario)
    except PersonaUnavailable as exc:
        raise NotEvaluable(str(exc)) from None
    values = {"stop_signal": options.stop_signal, "conversation_plan": scenario.conversation_plan}
    persona = fill_persona(persona, values)
    judge_options = options.judge_model_options

    async def judged_turn(message: str, before: Sequence[Invocation]) -> InvocationScore:
        prompt = judge.render(
            f"{NAME}.j2",
            conversation_plan=scenario.conversation_plan,
            history=history(before),
            generated_user_response=message,
            stop_signal=options.stop_signal,
            persona=persona,
        )
        samples = await gather_all(
            *(
                judge.generate(NAME, judge_options.judge_model, prompt, judge_options.judge_model_config, i, VERSION)
                for i in range(judge_options.num_samples)
            )
        )
        score = majority([parse_label(text) for text in samples])
        return InvocationScore(score, status_for(score, options.threshold))

    first = data.actual[0]
    if first.user_content is None or not first.user_content.parts:
        turns = [InvocationScore(None, Status.NOT_EVALUATED, "no user text")]
    else:
        score = float(content_text(first.user_content).strip() == scenario.starting_prompt.strip())
        turns = [
            InvocationScore(score, status_for(score, options.threshold), None if score else "not the starting prompt")
        ]
    later = await gather_all(
        *(judged_turn(content_text(inv.user_content), data.actual[:i]) for i, inv in enumerate(data.actual) if i > 0),
        judged_turn(options.stop_signal, data.actual),
    )
    if all(turn.score is None for turn in later):
        raise UnparseableReply('no judge reply had a readable "is_valid" label')
    *middle, stop = later
    turns += middle
    if stop.status is Status.FAILED:
        turns[-1] = InvocationScore(stop.score, stop.status, "the conversation did not end when it should have")
    passed = sum(t.score for t in turns if t.status is Status.PASSED and t.score is not None)
    overall = passed / len(turns)
    return MetricOutcome(overall, status_for(overall, options.threshold), turns)
