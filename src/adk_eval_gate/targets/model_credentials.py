"""Before the first case: does every Gemini model the agent tree uses have credentials to call with?

Without them every case fails the same way deep inside google-adk (a ValueError per model call, with a traceback
of about forty lines each): one line before anything runs says what is missing and how to go on — set the key, or
try the gate offline (record answers once, replay them: docs/try-it-offline.md).

Only google-adk's own `Gemini` (or a subclass that keeps its client) is checked, and only for what google-genai
itself reads: an API key (GOOGLE_API_KEY / GEMINI_API_KEY), or Vertex AI switched on (GOOGLE_GENAI_USE_VERTEXAI)
with a project — whose application default credentials cannot be checked without a network call, so they are
trusted. Other model classes (LiteLlm, a scripted test model) bring their own credentials or need none.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from inspect import getattr_static
from typing import Any

from adk_eval_gate.core.errors import InputError

_TRUE = {"1", "true", "yes"}


class MissingCredentials(InputError):
    """No credentials for the agent's Gemini model: `ci` stops on it; `validate` says what a run will need."""

    def __init__(self, file: str, problem: str, fix: str, model: str) -> None:
        super().__init__(file, "target.agent", problem, fix)
        self.model = model


def has_gemini_credentials(env: Mapping[str, str]) -> bool:
    if env.get("GOOGLE_API_KEY") or env.get("GEMINI_API_KEY"):
        return True
    vertex = env.get("GOOGLE_GENAI_USE_VERTEXAI", "").strip().lower() in _TRUE
    return vertex and bool(env.get("GOOGLE_CLOUD_PROJECT"))


def agent_tree(root: object) -> Iterator[Any]:
    """The root agent, its sub-agents and the agents behind AgentTools, each once (a tree can share agents)."""
    seen: set[int] = set()
    stack = [root]
    while stack:
        agent = stack.pop()
        if agent is None or id(agent) in seen:
            continue
        seen.add(id(agent))
        yield agent
        stack.extend(getattr(agent, "sub_agents", None) or [])
        stack.extend(getattr(tool, "agent", None) for tool in (getattr(agent, "tools", None) or []))


def gemini_model(agent: object) -> Any:
    """The agent's model when it calls Gemini through google-adk's own client; None otherwise."""
    from google.adk.models.google_llm import Gemini

    if not hasattr(agent, "canonical_model"):  # not an LlmAgent (a workflow agent, a custom BaseAgent)
        return None
    try:
        model = agent.canonical_model
    except Exception:  # an unresolvable model name fails later with ADK's own message, as `adk eval` would
        return None
    # a subclass that builds its own client (another endpoint, its own key) is not ours to judge
    keeps_client = getattr_static(type(model), "api_client", None) is getattr_static(Gemini, "api_client", None)
    return model if isinstance(model, Gemini) and keeps_client else None


def _gemini_model(agent: object) -> str | None:
    model = gemini_model(agent)
    return str(model.model) if model is not None else None


def missing_credentials(root: object, env: Mapping[str, str]) -> str | None:
    """The first Gemini model name found when there are no credentials for it, else None."""
    if has_gemini_credentials(env):
        return None
    return next((name for name in map(_gemini_model, agent_tree(root)) if name is not None), None)
