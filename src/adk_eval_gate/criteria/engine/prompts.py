"""What the judges' prompts are built from: the template environment and the texts ADK hands its judges."""

from __future__ import annotations

import json
from pathlib import Path

import jinja2
from google.genai import types as genai_types
from jinja2.sandbox import SandboxedEnvironment

from adk_eval_gate.core.contained_templates import ContainedLoader
from adk_eval_gate.evalsets.adk_eval_schema import (
    Invocation,
    InvocationEvents,
    content_text,
    tool_calls,
    tool_responses,
)

BUILT_IN = Path(__file__).parent.parent / "templates"  # criteria/templates


def environment(override: Path | None = None) -> SandboxedEnvironment:
    """The judges' templates; a file of the same name in `override` (the workflow's `judge.templates`) wins, so a
    team can reword one criterion's prompt and keep the rest. Its output must keep the labels ADK's parsers read."""
    search = [str(override), str(BUILT_IN)] if override else [str(BUILT_IN)]
    # Sandboxed: an override is the pull request's file, rendered in the process that holds GitHub's token.
    env = SandboxedEnvironment(
        loader=ContainedLoader(search),  # an override folder is the pull request's: nothing outside it
        undefined=jinja2.StrictUndefined,
        autoescape=False,
        keep_trailing_newline=True,
    )
    # A JSON string keeps untrusted text inside its quotes (newlines and quotes escaped) yet readable: unlike
    # `tojson`, no HTML-safety escapes such as \u003e for ">".
    env.filters["quoted"] = lambda value: json.dumps(value, ensure_ascii=False)
    return env


TEMPLATES = environment()


def response_text(invocation: Invocation, include_intermediate: bool) -> str:
    """ADK's text for the judge: the final response, or every intermediate text plus the final one."""
    if not include_intermediate:
        return content_text(invocation.final_response)
    parts: list[str] = []
    data = invocation.intermediate_data
    if isinstance(data, InvocationEvents):
        parts += [t for e in data.invocation_events if (t := content_text(e.content))]
    elif data is not None:
        parts += [t for _, p in data.intermediate_responses if (t := content_text(genai_types.Content(parts=p)))]
    if final := content_text(invocation.final_response):
        parts.append(final)
    return "\n".join(parts)


def developer_instructions(invocation: Invocation) -> tuple[str, str]:
    """(instructions of the agent that answered, tool declarations as JSON) from the recorded app details."""
    details = invocation.app_details
    if details is None or not details.agent_details:
        return "", "Agent has no tools."
    author = None
    if isinstance(invocation.intermediate_data, InvocationEvents) and invocation.intermediate_data.invocation_events:
        author = invocation.intermediate_data.invocation_events[0].author
    agent = details.agent_details.get(author) if author else None
    agent = agent or next(iter(details.agent_details.values()))
    tools = {name: a.tool_declarations for name, a in details.agent_details.items() if a.tool_declarations}
    return agent.instructions, json.dumps({"tool_declarations": tools}, indent=2) if tools else "Agent has no tools."


def tool_steps(invocation: Invocation) -> str:
    responses = {r.id: r for r in tool_responses(invocation.intermediate_data)}
    steps = [
        {
            "step": i,
            "tool_call": c.model_dump(mode="json", exclude_none=True),
            "tool_response": responses[c.id].model_dump(mode="json", exclude_none=True)
            if c.id in responses
            else "None",
        }
        for i, c in enumerate(tool_calls(invocation.intermediate_data))
    ]
    return json.dumps({"tool_calls_and_response": steps}, indent=2) if steps else "No intermediate steps were taken."
