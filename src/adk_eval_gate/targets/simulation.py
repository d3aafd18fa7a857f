"""The user side of `conversation_scenario` cases: an LLM-backed user simulator with ADK 2.13's behaviour.

* Turn 1 is the scenario's `starting_prompt`, verbatim, with no model call.
* Each later turn asks the model (`user_simulator_config.model`, default gemini-2.5-flash with thinking) for the
  next user message from the plan, the persona and the conversation so far — every event's text as
  `author: text`, thoughts skipped, tool calls and outputs only with `include_function_calls`.
* A reply containing `</finished>` (any case) ends the conversation; so does reaching `max_allowed_invocations`
  (the starting prompt counts; -1 is unlimited). An empty reply fails the case, as in ADK.
* `custom_instructions` is the team's own Jinja template, rendered in a sandbox with `stop_signal`,
  `conversation_plan`, `conversation_history` and `persona`.
Model calls go through the run's shared model client: pooled, retried, cached (keyed by the run index too, so
repeated runs stay independent samples) and counted as `user_simulator` usage.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

from google.genai import types as genai_types

from adk_eval_gate.core.json_types import JsonObject
from adk_eval_gate.evalsets.adk_eval_schema import ConversationScenario, EvalCase
from adk_eval_gate.evalsets.personas import PersonaUnavailable, fill_persona, resolve_persona
from adk_eval_gate.llm.cache import LlmCache
from adk_eval_gate.llm.client import Ask, LlmClient, LlmSettings, LlmUnavailable, UsageStats
from adk_eval_gate.targets.case_run import TargetError, TransientTargetError

if TYPE_CHECKING:
    import jinja2

STOP_SIGNAL = "</finished>"
PURPOSE = "user_simulator"
VERSION = "1"
DEFAULT_MODEL_CONFIGURATION: JsonObject = {"thinking_config": {"include_thoughts": True, "thinking_budget": 10240}}


@cache
def _templates() -> jinja2.Environment:
    """Loaded where a simulated user's prompt is rendered: the agent host imports this module for every worker."""
    import jinja2

    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(Path(__file__).parent / "templates")),
        undefined=jinja2.StrictUndefined,
        autoescape=False,
        keep_trailing_newline=True,
    )


@dataclass(frozen=True)
class SimulationSettings:
    """What a target needs to simulate users; plain data, so worker processes receive it intact."""

    configs: dict[str, JsonObject | None] = field(default_factory=dict)  # eval_set_id → user_simulator_config
    llm: LlmSettings = field(default_factory=LlmSettings)
    cache_dir: Path | None = None

    def client(self) -> LlmClient:
        return LlmClient(self.llm, LlmCache(self.cache_dir))


def history_text(events: Sequence[tuple[str, genai_types.Content | None]], include_function_calls: bool) -> str:
    lines = []
    for author, content in events:
        for part in (content.parts or []) if content else []:
            if part.text and not part.thought:
                lines.append(f"{author}: {part.text}")
            elif include_function_calls and part.function_call:
                lines.append(f"{author} called tool '{part.function_call.name}' with args: {part.function_call.args}")
            elif include_function_calls and part.function_response:
                lines.append(f"Tool '{part.function_response.name}' returned: {part.function_response.response}")
    return "\n\n".join(lines)


class UserSimulator:
    def __init__(self, scenario: ConversationScenario, config: JsonObject | None, llm: LlmClient, run: int) -> None:
        config = config or {}
        if config.get("type", "llm_backed") != "llm_backed":
            raise TargetError(f"user_simulator_config.type {config.get('type')!r} is not supported; use llm_backed")
        self._scenario = scenario
        self._model = config.get("model") or "gemini-2.5-flash"
        configured = config.get("model_configuration")
        self._model_configuration = DEFAULT_MODEL_CONFIGURATION if configured is None else configured
        self._limit = int(config.get("max_allowed_invocations", 20))
        self._custom = config.get("custom_instructions")
        self._include_calls = bool(config.get("include_function_calls", False))
        self._llm = llm
        self._run = run
        self._count = 0
        self.usage = UsageStats()
        try:
            self._persona = resolve_persona(scenario)
        except PersonaUnavailable as exc:
            raise TargetError(str(exc)) from None

    def _prompt(self, history: str) -> str:
        values: JsonObject = {
            "stop_signal": STOP_SIGNAL,
            "conversation_plan": self._scenario.conversation_plan,
            "conversation_history": history,
        }
        if self._persona is not None:
            values["persona"] = self._persona
        if self._custom:
            import jinja2.sandbox

            sandbox = jinja2.sandbox.SandboxedEnvironment()
            sandbox.filters["render_string_filter"] = lambda text: (
                sandbox.from_string(text).render(values) if text else ""
            )
            return sandbox.from_string(self._custom).render(values)
        return (
            _templates()
            .get_template("user_simulator.j2")
            .render({**values, "persona": fill_persona(self._persona, values)})
        )

    async def next_message(
        self, events: Sequence[tuple[str, genai_types.Content | None]]
    ) -> genai_types.Content | None:
        """The next user message, or None when the conversation is over."""
        if 0 <= self._limit <= self._count:
            return None
        if self._count == 0:
            self._count += 1
            return genai_types.Content(role="user", parts=[genai_types.Part(text=self._scenario.starting_prompt)])
        prompt = self._prompt(history_text(events, self._include_calls))
        try:
            text = await self._llm.generate(
                Ask(PURPOSE, self._model, prompt, self._model_configuration, self._run, VERSION),
                skip_thoughts=True,
                tally=self.usage,
            )
        except LlmUnavailable as exc:
            raise (TransientTargetError if exc.transient else TargetError)(f"user simulator: {exc}") from None
        self._count += 1
        if text and STOP_SIGNAL in text.lower():
            return None
        if not text:
            raise TargetError("user simulator: the model returned an empty message")
        return genai_types.Content(role="user", parts=[genai_types.Part(text=text)])


class ScriptedUser:
    """The user turns a case spells out in its `conversation`."""

    usage: UsageStats | None = None

    def __init__(self, turns: Sequence[genai_types.Content]) -> None:
        self._turns = iter(turns)

    async def next_message(
        self, events: Sequence[tuple[str, genai_types.Content | None]]
    ) -> genai_types.Content | None:
        return next(self._turns, None)


class Users:
    """Hands each case and run its user: scripted, or simulated from the eval set's user_simulator_config."""

    def __init__(self, settings: SimulationSettings | None) -> None:
        self._settings = settings or SimulationSettings()
        self._client: LlmClient | None = None

    def for_case(self, eval_set_id: str, case: EvalCase, run: int) -> ScriptedUser | UserSimulator:
        if case.conversation is not None:
            return ScriptedUser([turn.user_content for turn in case.conversation])
        scenario = case.conversation_scenario
        if scenario is None:  # the eval set's own check holds one or the other: never a case with neither
            raise TargetError(f"case {case.eval_id!r} has neither a conversation nor a conversation_scenario")
        if self._client is None:
            self._client = self._settings.client()
        return UserSimulator(scenario, self._settings.configs.get(eval_set_id), self._client, run)
