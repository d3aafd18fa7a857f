"""`adk` target: run an ADK agent in process through google-adk's Runner, as `adk eval` does.

The agent is found like `adk eval` finds it: an agent folder (its `__init__.py` imported as a package,
then `agent` → `app` (an App) / `root_agent` / `await get_agent_async()`), or `module:attribute`. The folder's
`.env` is loaded without overriding the environment. Each case and run gets its own session, seeded from the
case's `session_input`; user turns run one after another; every event is kept and converted with ADK's rules.
Needs the `adk` extra.
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import os
import sys
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from adk_eval_gate.config.offline import OFFLINE_COMMAND
from adk_eval_gate.core.errors import InputError
from adk_eval_gate.evalsets.adk_eval_schema import AgentDetails, AppDetails, EvalCase, Invocation
from adk_eval_gate.evalsets.agents_cli_dataset import prior_events
from adk_eval_gate.targets.adk_runtime import import_runtime, require_adk, retry_plugin_class
from adk_eval_gate.targets.case_run import CaseRun, TransientTargetError, one_line
from adk_eval_gate.targets.events import events_to_invocation
from adk_eval_gate.targets.expected_model import play_expected, playing
from adk_eval_gate.targets.host_start import load_agent_dotenv
from adk_eval_gate.targets.model_credentials import MissingCredentials, missing_credentials
from adk_eval_gate.targets.model_reach import require_reachable
from adk_eval_gate.targets.simulation import ScriptedUser, SimulationSettings, Users, UserSimulator

if TYPE_CHECKING:  # google-adk is optional: imported when the target starts, not with this module
    from google.adk.artifacts.in_memory_artifact_service import InMemoryArtifactService
    from google.adk.memory.in_memory_memory_service import InMemoryMemoryService
    from google.adk.runners import Runner
    from google.adk.sessions.in_memory_session_service import InMemorySessionService
    from google.adk.sessions.session import Session


@dataclass(frozen=True)
class _Services:
    """ADK's in-memory services of one started target, shared by its cases as `adk api_server` shares them."""

    sessions: InMemorySessionService
    artifacts: InMemoryArtifactService
    memory: InMemoryMemoryService


def _load_dotenv(folder: Path) -> None:
    load_agent_dotenv(str(folder), folder)


def _import_folder(folder: Path) -> Any:
    init = folder / "__init__.py"
    if not init.is_file():
        raise InputError(
            folder,
            "target.agent",
            "is not an agent folder (no __init__.py)",
            "point at the folder `adk eval` would take, or use module:attribute",
        )
    name = f"_adk_eval_gate_agent_{folder.name}_{abs(hash(str(folder.resolve())))}"
    if name in sys.modules:
        return getattr(sys.modules[name], "agent", sys.modules[name])
    parent = str(folder.resolve().parent)
    if parent not in sys.path:
        sys.path.insert(0, parent)  # lets the agent use absolute imports of its own package
    spec = importlib.util.spec_from_file_location(name, init, submodule_search_locations=[str(folder)])
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return getattr(module, "agent", module)


def _import_attribute(reference: str, base_dir: Path) -> Any:
    module_name, _, attribute = reference.partition(":")
    if str(base_dir) not in sys.path:
        sys.path.insert(0, str(base_dir))
    module = importlib.import_module(module_name)
    try:
        return getattr(module, attribute)
    except AttributeError:
        raise InputError(
            None,
            "target.agent",
            f"module {module_name!r} has no attribute {attribute!r}",
            "name the root agent or App object after the colon",
        ) from None


async def load_agent(reference: str, base_dir: Path) -> tuple[Any, Any]:
    """Returns (app or None, root agent)."""
    require_adk()
    from google.adk.agents.base_agent import BaseAgent
    from google.adk.apps.app import App

    path = Path(reference)
    path = path if path.is_absolute() else base_dir / path
    try:
        if ":" in reference and not path.is_dir():
            found = _import_attribute(reference, base_dir)
            holder = None
        else:
            _load_dotenv(path)
            holder = _import_folder(path)
            found = None
    except InputError:
        raise
    except Exception as exc:  # the user's agent code failed to import
        raise InputError(
            reference,
            "target.agent",
            f"importing the agent failed: {type(exc).__name__}: {exc}",
            "fix the agent module so it imports",
        ) from None
    if holder is not None:
        app = getattr(holder, "app", None)
        if isinstance(app, App):
            return app, app.root_agent
        if hasattr(holder, "root_agent"):
            return None, holder.root_agent
        if hasattr(holder, "get_agent_async"):
            agent, _cleanup = await holder.get_agent_async()
            return None, agent
        raise InputError(
            reference,
            "target.agent",
            "the agent module has no `app`, `root_agent` or `get_agent_async`",
            "define root_agent in agent.py, as for `adk eval`",
        )
    if isinstance(found, App):
        return found, found.root_agent
    if isinstance(found, BaseAgent):
        return None, found
    if callable(found):
        made = found()
        made = await made if inspect.isawaitable(made) else made
        made = made[0] if isinstance(made, tuple) else made
        return (made, made.root_agent) if isinstance(made, App) else (None, made)
    raise InputError(
        reference,
        "target.agent",
        f"{type(found).__name__} is not an ADK agent or App",
        "point at a root agent, an App, or a factory returning one",
    )


def _app_details_plugin() -> Any:  # an ADK BasePlugin, its class made once ADK is imported
    """Records each agent's instructions and tool declarations from its first model request of a turn,
    as ADK's request-intercepter plugin does (judges read them)."""
    from google.adk.plugins.base_plugin import BasePlugin

    class AppDetailsRecorder(BasePlugin):
        def __init__(self) -> None:
            super().__init__(name="adk_eval_gate_app_details")
            self.by_invocation: dict[str, dict[str, AgentDetails]] = {}

        async def before_model_callback(self, *, callback_context: Any, llm_request: Any) -> None:
            details = self.by_invocation.setdefault(callback_context.invocation_id, {})
            name = callback_context.agent_name
            if name not in details:
                config = llm_request.config
                tools = [
                    t.model_dump(mode="json", exclude_none=True) if hasattr(t, "model_dump") else t
                    for t in (config.tools or [])
                ]
                instructions = config.system_instruction
                details[name] = AgentDetails(
                    name=name,
                    instructions=instructions if isinstance(instructions, str) else "",
                    tool_declarations=tools,
                )
            return None

    return AppDetailsRecorder()


def _is_transient(exc: BaseException) -> bool:
    """A model API's 408/429/5xx (google-genai's APIError carries the HTTP code)."""
    code = getattr(exc, "code", None)
    return (
        type(exc).__module__.startswith("google.genai")
        and isinstance(code, int)
        and (code in (408, 429) or code >= 500)
    )


def _retry_plugin() -> list[Any]:
    """`adk eval` adds HTTP retry options to the agent's model requests; so do we, when this ADK has them."""
    plugin = retry_plugin_class()
    return [plugin(name="ensure_retry_options")] if plugin is not None else []


class AdkTarget:
    kind = "adk"

    def __init__(
        self, reference: str, base_dir: Path, simulation: SimulationSettings | None = None, played: bool = False
    ) -> None:
        self._reference = reference
        self._base_dir = base_dir
        self._simulation = simulation
        self._played = played  # `--offline`: the model played from the expected turns (expected_model.py)

    @property
    def played(self) -> bool:
        return self._played
        self._app: Any = None
        self._agent: Any = None
        self._services: _Services | None = None

    def host_agent(self) -> tuple[str, Path] | None:
        """What the agent host imports to run this agent in forked workers (agent_host.py)."""
        return self._reference, self._base_dir

    def preload(self) -> None:
        """Imports google-adk's runtime and the agent's code without building anything, so worker processes
        forked afterwards start warm."""
        import_runtime()
        path = Path(self._reference)
        path = path if path.is_absolute() else self._base_dir / path
        if path.is_dir():
            try:
                _load_dotenv(path)
                module = _import_folder(path)
            except InputError:
                raise
            except Exception as exc:
                raise InputError(
                    self._reference,
                    "target.agent",
                    f"importing the agent failed: {type(exc).__name__}: {exc}",
                    "fix the agent module so it imports",
                ) from None
            # the agent host preloads before forking any worker: a missing key stops the run here, once
            app = getattr(module, "app", None)
            self._require_credentials(getattr(app, "root_agent", None) or getattr(module, "root_agent", None))

    def _require_credentials(self, agent: Any) -> None:
        """One line before any case runs, instead of google-adk's traceback in every case (model_credentials.py)."""
        if not self._played and (model := missing_credentials(agent, os.environ)) is not None:
            raise MissingCredentials(
                self._reference,
                f"the agent's model {model} calls Gemini, and no credentials are set (GOOGLE_API_KEY, or "
                "GOOGLE_GENAI_USE_VERTEXAI=TRUE with GOOGLE_CLOUD_PROJECT)",
                "set them (in Actions: a repository secret in the workflow's env), or try the gate without a key: "
                f"{OFFLINE_COMMAND} (docs/try-it-offline.md)",
                model=model,
            )
        if not self._played:  # model_reach.py: seconds, not minutes of retries, when the endpoint is not there
            require_reachable(self._reference, agent, os.environ)

    async def start(self) -> None:
        self.preload()
        self._app, self._agent = await self._load()
        self._require_credentials(self._agent)
        if self._played:
            play_expected(self._agent)
        from google.adk.artifacts.in_memory_artifact_service import InMemoryArtifactService
        from google.adk.memory.in_memory_memory_service import InMemoryMemoryService
        from google.adk.sessions.in_memory_session_service import InMemorySessionService

        self._services = _Services(InMemorySessionService(), InMemoryArtifactService(), InMemoryMemoryService())
        self._recorder = _app_details_plugin()
        self._runners: dict[str, Runner] = {}
        self._users = Users(self._simulation)

    @property
    def _started(self) -> _Services:
        if self._services is None:
            raise RuntimeError("the adk target ran a case before start()")
        return self._services

    async def _load(self) -> tuple[Any, Any]:
        return await load_agent(self._reference, self._base_dir)

    def _runner(self, app_name: str) -> Runner:
        """One Runner per app name, shared by concurrent cases, as `adk api_server` shares one per app: each
        case still runs in its own session."""
        runner = self._runners.get(app_name)
        if runner is not None:
            return runner
        from google.adk.runners import Runner

        plugins = [self._recorder, *_retry_plugin()]
        services = self._started
        if self._app is not None:
            app = self._app.model_copy(update={"plugins": list(self._app.plugins) + plugins, "root_agent": self._agent})
            runner = Runner(
                app=app,
                app_name=app_name,
                session_service=services.sessions,
                artifact_service=services.artifacts,
                memory_service=services.memory,
            )
        else:
            runner = Runner(
                app_name=app_name,
                agent=self._agent,
                plugins=plugins,
                session_service=services.sessions,
                artifact_service=services.artifacts,
                memory_service=services.memory,
            )
        self._runners[app_name] = runner
        return runner

    async def run_case(self, eval_set_id: str, case: EvalCase, run: int) -> CaseRun:
        user = self._users.for_case(eval_set_id, case, run)
        session_input = case.session_input
        app_name = session_input.app_name if session_input else "EvaluationGenerator"
        user_id = session_input.user_id if session_input else "test_user_id"
        session_id = (session_input.session_id if session_input else None) or f"adk-eval-gate-{uuid.uuid4()}"
        sessions = self._started.sessions
        session = None
        if session_input and session_input.session_id:
            session = await sessions.get_session(app_name=app_name, user_id=user_id, session_id=session_id)
        if session is None:
            session = await sessions.create_session(
                app_name=app_name,
                user_id=user_id,
                state=dict(session_input.state) if session_input else {},
                session_id=session_id,
            )
        invocations: list[Invocation] = []
        try:
            await self._seed_history(session, case)
            if self._played:
                with playing(case) as played_user:
                    await self._run_turns(played_user, self._runner(session.app_name), user_id, session.id, invocations)
            else:
                await self._run_turns(user, self._runner(session.app_name), user_id, session.id, invocations)
        finally:
            await sessions.delete_session(app_name=session.app_name, user_id=user_id, session_id=session.id)
        return CaseRun(eval_set_id, case.eval_id, run, tuple(invocations), simulator_usage=user.usage)

    async def _seed_history(self, session: Session, case: EvalCase) -> None:
        """An agents-cli Shape B case's earlier turns, as the session's history (as `eval generate` seeds it)."""
        history = prior_events(case)
        if not history:
            return
        from google.adk.events.event import Event

        for payload in history:
            await self._started.sessions.append_event(session, Event.model_validate(payload))

    async def _run_turns(
        self,
        user: ScriptedUser | UserSimulator,
        runner: Runner,
        user_id: str,
        session_id: str,
        invocations: list[Invocation],
    ) -> None:
        history: list[tuple[str, Any]] = []
        try:
            while (message := await user.next_message(history)) is not None:
                started = time.monotonic()
                events = [
                    event
                    async for event in runner.run_async(user_id=user_id, session_id=session_id, new_message=message)
                ]
                history += [("user", message), *((event.author, event.content) for event in events)]
                invocation_id = next((e.invocation_id for e in events if e.invocation_id), "")
                details = self._recorder.by_invocation.pop(invocation_id, None)
                invocations.append(
                    events_to_invocation(
                        events,
                        message,
                        invocation_id=invocation_id,
                        creation_timestamp=time.time(),
                        duration=round(time.monotonic() - started, 3),
                        app_details=AppDetails(agent_details=details) if details else None,
                    )
                )
        except Exception as exc:
            if _is_transient(exc):
                raise TransientTargetError(f"model call failed: {one_line(exc)}") from None
            raise

    async def aclose(self) -> None:
        for runner in getattr(self, "_runners", {}).values():
            close = getattr(runner, "close", None)
            if close is not None:
                await close()
