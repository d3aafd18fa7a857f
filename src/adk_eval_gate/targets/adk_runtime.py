"""google-adk's runtime, imported ahead of time: the agent host imports everything an agent's worker will need
(including what ADK itself would load lazily on the first model call) before forking, so no worker repeats it.
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
import os
import sys
from functools import cache
from pathlib import Path
from typing import Any

from adk_eval_gate.core.errors import InputError

MISSING_ADK = "the adk target needs google-adk; install it with: pip install 'adk-eval-gate[adk]'"


def require_adk() -> None:
    if importlib.util.find_spec("google.adk") is None:
        raise InputError(None, "target.kind", "adk: google-adk is not installed", MISSING_ADK)


@cache
def retry_plugin_class() -> Any:
    """ADK's own EnsureRetryOptionsPlugin. Its package's __init__ imports ADK's AgentEvaluator and eval config
    (0.4 s), none of which the plugin needs, so unless that package is loaded already its module is executed on
    its own: same file, its imports resolved against the real google.adk packages."""
    name = "google.adk.evaluation._retry_options_utils"
    if "google.adk.evaluation" not in sys.modules:
        adk = importlib.util.find_spec("google.adk")
        locations = adk.submodule_search_locations if adk else None
        path = Path(locations[0], "evaluation", "_retry_options_utils.py") if locations else None
        spec = importlib.util.spec_from_file_location(name, path) if path is not None and path.is_file() else None
        if spec is not None and spec.loader is not None:
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
            return getattr(module, "EnsureRetryOptionsPlugin", None)
    try:
        return importlib.import_module(name).EnsureRetryOptionsPlugin
    except (ImportError, AttributeError):
        return None


def import_runtime() -> None:
    """Imports google-adk's runtime (what any agent's worker needs) without building anything, so worker
    processes forked afterwards start warm."""
    require_adk()
    # We export no spans, and serialising message content into them is a quarter of ADK's CPU per call.
    os.environ.setdefault("ADK_CAPTURE_MESSAGE_CONTENT_IN_SPANS", "false")
    import google.adk.agents
    import google.adk.artifacts.in_memory_artifact_service
    import google.adk.memory.in_memory_memory_service
    import google.adk.plugins.base_plugin
    import google.adk.runners
    import google.adk.sessions.in_memory_session_service  # noqa: F401

    retry_plugin_class()
    # What google-adk imports lazily on an LLM agent's first model call (flows, tools, auth, telemetry; 550
    # modules): imported here, before workers are forked, rather than once in every worker.
    for name in _LAZY_RUNTIME:
        with contextlib.suppress(ImportError):
            importlib.import_module(name)
    # google-genai builds a model's validator on its first use; those every model call uses are built here.
    from google.genai import types

    for name in _GENAI_PER_CALL:
        if (model := getattr(types, name, None)) is not None:
            model.model_rebuild()


_LAZY_RUNTIME = (
    "google.adk.flows.llm_flows.auto_flow",
    "google.adk.flows.llm_flows.single_flow",
    "google.adk.flows.llm_flows.functions",
    "google.adk.workflow._llm_agent_wrapper",
    "google.adk.workflow._node_runner",
    "google.adk.workflow._dynamic_node_scheduler",
    "google.adk.workflow._workflow",
    "google.adk.telemetry.tracing",
    "google.adk.telemetry._instrumentation",
    "google.adk.telemetry._metrics",
    "google.adk.auth.auth_preprocessor",
    "google.adk.models.google_llm",
    "google.adk.apps.app",
    "google.adk.tools.transfer_to_agent_tool",
    "google.adk.tools.google_search_tool",
    "google.adk.tools.vertex_ai_search_tool",
    "google.adk.tools._node_tool",
    "google.adk.agents._agent_router",
    "google.adk.workflow._node_runner_utils",
    "google.adk.a2a.agent",
)


def cache_missing_optionals() -> None:
    """ADK tries these optional imports again on every agent step (a tenth of a worker's CPU when the optional
    package is missing, since a failed import is not cached): once the agents are loaded, a failure stands for
    the whole run. Called by the agent host before it forks the workers."""
    for name in _RETRIED_OPTIONAL:
        try:
            importlib.import_module(name)
        except ImportError:
            # the next import raises ModuleNotFoundError at once, as it would have. None is the import system's
            # documented "blocked" entry, which typeshed's dict[str, ModuleType] for sys.modules leaves out.
            sys.modules[name] = None  # type: ignore[assignment]


_RETRIED_OPTIONAL = ("google.adk.agents.remote_a2a_agent",)  # needs the `a2a` package
_GENAI_PER_CALL = (
    "Content",
    "UserContent",
    "FunctionCall",
    "FunctionResponse",
    "FunctionDeclaration",
    "Tool",
    "GenerateContentConfig",
    "HttpOptions",
    "LiveConnectConfig",
    "AudioTranscriptionConfig",
)
