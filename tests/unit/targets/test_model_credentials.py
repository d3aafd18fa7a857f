"""An agent whose Gemini model has no credentials stops the run with one line before any case, instead of
google-adk's traceback in every case; scripted and other models, and agents with credentials, run as before."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

pytest.importorskip("google.adk")

from google.adk.agents import LlmAgent
from google.adk.tools.agent_tool import AgentTool

from adk_eval_gate.targets.model_credentials import has_gemini_credentials, missing_credentials


@pytest.mark.parametrize(
    ("env", "has"),
    [
        ({}, False),
        ({"GOOGLE_API_KEY": "k"}, True),
        ({"GEMINI_API_KEY": "k"}, True),
        ({"GOOGLE_GENAI_USE_VERTEXAI": "TRUE"}, False),  # Vertex without a project cannot be called
        ({"GOOGLE_GENAI_USE_VERTEXAI": "true", "GOOGLE_CLOUD_PROJECT": "p"}, True),
        ({"GOOGLE_GENAI_USE_VERTEXAI": "false", "GOOGLE_CLOUD_PROJECT": "p"}, False),
    ],
)
def test_what_counts_as_gemini_credentials(env: dict[str, str], has: bool) -> None:
    assert has_gemini_credentials(env) is has


def _scripted_agent(name: str) -> LlmAgent:
    sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "examples" / "hello_world"))
    try:
        from hello_world.agent import ScriptedLlm
    finally:
        sys.path.pop(0)
    return LlmAgent(name=name, model=ScriptedLlm())


def test_every_gemini_model_in_the_tree_is_found() -> None:
    gemini = LlmAgent(name="helper", model="gemini-2.5-flash")
    assert missing_credentials(gemini, {}) == "gemini-2.5-flash"
    assert missing_credentials(gemini, {"GOOGLE_API_KEY": "k"}) is None
    # behind a scripted root: as a sub-agent and as an AgentTool
    root = _scripted_agent("root")
    assert missing_credentials(root, {}) is None
    root_with_sub = _scripted_agent("root2").model_copy(update={"sub_agents": [gemini]})
    assert missing_credentials(root_with_sub, {}) == "gemini-2.5-flash"
    tool_root = LlmAgent(name="root3", model=_scripted_agent("x").model, tools=[AgentTool(agent=gemini)])
    assert missing_credentials(tool_root, {}) == "gemini-2.5-flash"


def test_a_sub_agent_inherits_its_parents_gemini_model() -> None:
    child = LlmAgent(name="child")  # no model of its own: the nearest ancestor's
    LlmAgent(name="parent", model="gemini-2.5-pro", sub_agents=[child])
    assert missing_credentials(child, {}) == "gemini-2.5-pro"
