"""`rubric_based_multi_turn_trajectory_quality_v1`: rubric verdicts on the whole conversation (ADK 2.13 rules).

The judge sees every turn — user text, each agent event's text, tool calls and tool outputs, the final answer
labelled with the turn's first author — plus the agents' deduplicated instructions and `name: description` tool
list. Only the last invocation is judged (with its effective rubrics of type TRAJECTORY_QUALITY); earlier turns
are not evaluated and the last turn's score is the case score. Parsing, mapping and voting are rubrics.py's.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from google.genai import types as genai_types

from adk_eval_gate.core.json_types import JsonObject
from adk_eval_gate.criteria.engine.criterion import InvocationScore, MetricOutcome, ScoringInput, Status
from adk_eval_gate.criteria.engine.judge import Judge
from adk_eval_gate.criteria.engine.options import RubricsOptions
from adk_eval_gate.criteria.rubrics import RubricJudgeKind, score_with_rubrics
from adk_eval_gate.evalsets.adk_eval_schema import Invocation, InvocationEvents, Rubric

NAME = "rubric_based_multi_turn_trajectory_quality_v1"


def _texts(content: genai_types.Content | None) -> list[str]:
    return [p.text for p in (content.parts or []) if p.text] if content else []


def dialogue(invocations: Sequence[Invocation]) -> list[tuple[str, str]]:
    lines: list[tuple[str, str]] = []
    for turn, invocation in enumerate(invocations, start=1):
        if texts := _texts(invocation.user_content):
            lines.append((f"USER TURN {turn}", " ".join(texts)))
        events = (
            invocation.intermediate_data.invocation_events
            if isinstance(invocation.intermediate_data, InvocationEvents)
            else []
        )
        for event in events:
            role = "USER" if event.author and event.author.lower() == "user" else f"AGENT ({event.author})"
            if texts := _texts(event.content):
                lines.append((f"{role} TURN {turn}", " ".join(texts)))
            for part in (event.content.parts or []) if event.content else []:
                if part.function_call:
                    args = json.dumps(dict(part.function_call.args)) if part.function_call.args else "{}"
                    lines.append((f"{role} TURN {turn} (tool call)", f"{part.function_call.name}({args})"))
                if part.function_response:
                    output = (
                        json.dumps(dict(part.function_response.response)) if part.function_response.response else "{}"
                    )
                    lines.append((f"{role} TURN {turn} (tool output)", f"{part.function_response.name} -> {output}"))
        if texts := _texts(invocation.final_response):
            author = events[0].author if events else "agent"
            lines.append((f"AGENT ({author}) TURN {turn}", " ".join(texts)))
    return lines


def _function_declarations(tools: list[Any] | None) -> list[JsonObject]:
    """Recorded tools are genai Tool dicts, in either spelling."""
    found: list[JsonObject] = []
    for tool in tools or []:
        if isinstance(tool, dict):
            found += tool.get("function_declarations") or tool.get("functionDeclarations") or []
    return found


def agents_overview(invocations: Sequence[Invocation]) -> tuple[str, str]:
    instructions: dict[str, None] = {}
    tools: dict[str, None] = {}
    for invocation in invocations:
        details = invocation.app_details.agent_details if invocation.app_details else {}
        for agent_id, agent in (details or {}).items():
            instructions[f"Agent {agent_id} Instructions:\n{agent.instructions}"] = None
            tools[f"Agent: {agent_id}"] = None
            for function in _function_declarations(agent.tool_declarations):
                tools[f"- {function.get('name')}: {function.get('description')}"] = None
    return "\n\n".join(instructions), "\n".join(tools)


def rubric_list(rubrics: list[Rubric]) -> str:
    items = []
    for rubric in rubrics:
        item = {"id": rubric.rubric_id, "property": rubric.rubric_content.text_property}
        if rubric.type:
            item["type"] = rubric.type
        items.append(item)
    return json.dumps(items, indent=2)


async def score_multi_turn_trajectory(data: ScoringInput, options: RubricsOptions, judge: Judge) -> MetricOutcome:
    if not data.actual:
        return MetricOutcome.not_evaluated("no actual invocations")
    lines = dialogue(data.actual)
    instructions, tools = agents_overview(data.actual)

    def render(judge: Judge, _invocation: Invocation, rubrics: list[Rubric]) -> str:
        return judge.render(
            f"{NAME}.j2",
            agent_instructions=instructions,
            agent_tools=tools,
            dialogue=lines,
            rubrics=rubric_list(rubrics),
        )

    last = ScoringInput(data.case, data.actual[-1:], data.expected[-1:] if data.expected else None)
    kind = RubricJudgeKind(NAME, "TRAJECTORY_QUALITY", render)
    outcome = await score_with_rubrics(last, options, judge, kind, offset=len(data.actual) - 1)
    earlier = [InvocationScore(None, Status.NOT_EVALUATED, "judged with the whole conversation at the last turn")]
    outcome.per_invocation = earlier * (len(data.actual) - 1) + outcome.per_invocation
    return outcome
