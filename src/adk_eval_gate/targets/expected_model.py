"""`--offline`: the agent's model played from the eval set's expected turns, so a first run needs no key.

Every LlmAgent of the tree (root, sub-agents, agents behind an AgentTool) gets an `ExpectedModel` in place of the
model ADK would resolve. Turn by turn it answers as the case's `conversation` says the model should have: each
expected tool call of the turn (`intermediate_data.tool_uses`, in order, with their arguments), one per model
call, then the expected final response. ADK then does everything else for real: the tools execute, callbacks and
plugins run, transfers go to the sub-agent named, and a call to a tool the agent does not have fails as it would.
So a run tests the agent's tools, its wiring and our scoring — never the model, which is why every output of such
a run carries OFFLINE_LABEL and such results never become, or meet, a real baseline (docs/try-it-offline.md).

Which case a model call belongs to is a context variable: each case runs in its own asyncio task (or one after
another in one), and ADK's tasks inherit the context of the turn that started them; agents and their models are
shared by concurrent cases, so nothing case-specific can live on them.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Collection, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any

from google.genai import types

from adk_eval_gate.evalsets.adk_eval_schema import EvalCase, Invocation, tool_calls
from adk_eval_gate.targets.case_run import TargetError
from adk_eval_gate.targets.model_credentials import agent_tree
from adk_eval_gate.targets.simulation import ScriptedUser

if TYPE_CHECKING:
    from google.adk.models.llm_request import LlmRequest
    from google.adk.models.llm_response import LlmResponse


class CasePlay:
    """One case's expected turns and how far the played model has got: the current turn, its next tool call."""

    def __init__(self, turns: Sequence[Invocation]) -> None:
        self._turns = tuple(turns)
        self._turn = -1
        self._next_call = 0

    def start_turn(self) -> None:
        self._turn += 1
        self._next_call = 0

    def next_content(self, tools: Collection[str]) -> types.Content:
        """The model's next answer: the turn's next expected tool call among `tools` (the asking agent's), else
        its final response. A call to a tool the agent does not have is never made: ADK would answer it with an
        error the model reads, and the trajectory would still list it, so a renamed or unwired tool would pass;
        left out, it is missing from the trajectory, which is what the agent could actually do."""
        if not 0 <= self._turn < len(self._turns):  # a model called outside any turn has nothing to play
            return types.Content(role="model", parts=[types.Part(text="")])
        turn = self._turns[self._turn]
        calls = tool_calls(turn.intermediate_data)
        while self._next_call < len(calls):
            call = calls[self._next_call]
            self._next_call += 1
            if call.name not in tools:
                continue
            played = types.FunctionCall(name=call.name, args=dict(call.args or {}))
            return types.Content(role="model", parts=[types.Part(function_call=played)])
        final = turn.final_response
        parts = [types.Part(text=part.text) for part in (final.parts or []) if part.text] if final else []
        return types.Content(role="model", parts=parts or [types.Part(text="")])


# One handle, never a value: each case's task sets its own CasePlay in its own context (see the module's docstring).
_CASE: ContextVar[CasePlay | None] = ContextVar("adk_eval_gate_case_play", default=None)


class _PlayedUser(ScriptedUser):
    """The case's scripted user, telling the play when each new turn starts."""

    def __init__(self, case: EvalCase, play: CasePlay) -> None:
        super().__init__([turn.user_content for turn in case.conversation or []])
        self._play = play

    async def next_message(self, events: Sequence[tuple[str, types.Content | None]]) -> types.Content | None:
        message = await super().next_message(events)
        if message is not None:
            self._play.start_turn()
        return message


@contextmanager
def playing(case: EvalCase) -> Iterator[ScriptedUser]:
    """The case's user, its model calls played from its expected turns while the block runs."""
    if case.conversation is None:
        raise TargetError(
            f"offline: case {case.eval_id!r} has a conversation_scenario, so there are no expected turns to play "
            "(a simulated user needs a model); it runs with a key"
        )
    play = CasePlay(case.conversation)
    token = _CASE.set(play)
    try:
        yield _PlayedUser(case, play)
    finally:
        _CASE.reset(token)


def _expected_model_class() -> type[Any]:
    """Built on first use: google-adk is optional, imported by the agent host, never by the run's own process."""
    from google.adk.models.base_llm import BaseLlm
    from google.adk.models.llm_response import LlmResponse

    class ExpectedModel(BaseLlm):
        """Plays the current case's expected turns; keeps the replaced model's name and capabilities, since
        ADK decides some things from them (output schema with tools, built-in tools)."""

        replaced: Any = None

        @property
        def capabilities(self) -> Any:
            replaced = self.replaced
            return replaced.capabilities if replaced is not None else super().capabilities

        async def generate_content_async(
            self, llm_request: LlmRequest, stream: bool = False
        ) -> AsyncGenerator[LlmResponse, None]:
            play = _CASE.get()
            if play is None:  # a model called outside any case (an agent's own start-up call): nothing to play
                yield LlmResponse(content=types.Content(role="model", parts=[types.Part(text="")]))
                return
            usage = types.GenerateContentResponseUsageMetadata(
                prompt_token_count=0, candidates_token_count=0, total_token_count=0
            )
            yield LlmResponse(content=play.next_content(llm_request.tools_dict), usage_metadata=usage)

    return ExpectedModel


def play_expected(root: object) -> int:
    """Gives every LlmAgent of the tree a played model in place of its own; how many agents it replaced."""
    expected = _expected_model_class()
    count = 0
    for agent in agent_tree(root):
        if not hasattr(agent, "canonical_model"):  # a workflow agent or a custom BaseAgent calls no model itself
            continue
        try:
            replaced = agent.canonical_model
            name = str(replaced.model)
        except Exception:  # a model name no registry resolves: the played model needs none
            replaced, name = None, str(getattr(agent, "model", "") or "model")
        agent.model = expected(model=name, replaced=replaced)
        count += 1
    return count
