"""The agent hosts of one command: the host started before the config is read, the one warmed for the run, and
the one the run took (perhaps still writing ADK eval history). The command creates the pool, hands it to the
loading of the plan and to the run, and calls `finish` last; nothing about a run lives in a module's globals.

Kept light (no asyncio, no pydantic at import): `run` starts the host through it before importing the stages.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from adk_eval_gate.core.errors import InputError
from adk_eval_gate.targets.host_start import names_adk_target, spawn
from adk_eval_gate.targets.host_timeouts import HostTimeouts, host_timeouts

if TYPE_CHECKING:
    from adk_eval_gate.config.loader import Workflow
    from adk_eval_gate.targets.agent_host import AgentHost, Spawned


class AgentHostPool:
    def __init__(self, timeouts: HostTimeouts | None = None) -> None:
        self._timeouts = timeouts
        self._early: Spawned | None = None  # started before its agents were known
        self._warm: AgentHost | None = None  # named its agents, for the run to take
        self._finishing: list[AgentHost] = []  # taken by a run, perhaps still writing eval history

    @property
    def timeouts(self) -> HostTimeouts:
        """Read from the environment when first needed (a bad value is an InputError, inside the command)."""
        if self._timeouts is None:
            self._timeouts = host_timeouts()
        return self._timeouts

    def start_early(self, config: Path) -> None:
        """Starts the agent host before the config is even validated when its text names an `adk` target: the
        host spends the next second importing google-adk, which the run would otherwise wait for. `warm_up` then
        names the agents, or discards the host when the config runs none here."""
        if self._early is None and self._warm is None and names_adk_target(config):
            self._early = spawn()

    @property
    def started(self) -> bool:
        return self._early is not None or self._warm is not None or bool(self._finishing)

    def warm_up(self, workflow: Workflow) -> None:
        """Has the agent host import the workflow's `adk` agents (starting it if `start_early` did not), so
        google-adk is imported while this process loads the eval sets; the run takes it (`take`)."""
        from adk_eval_gate.targets.agent_host import AgentHost, in_own_process
        from adk_eval_gate.targets.host_start import host_supported

        timeouts = self.timeouts
        early, self._early = self._early, None
        host = AgentHost(early, timeouts) if early is not None else None
        agents = [
            (a.settings.target.agent, workflow.base_dir) for a in workflow.agents if a.settings.target.kind == "adk"
        ]
        workers = workflow.settings.run.workers
        if in_own_process(None if workers == "auto" else workers) or not host_supported() or not agents:
            if host is not None:
                host.discard()
            return
        if self._warm is not None:  # warmed twice (a second plan in one command): the newer agents win
            self._warm.discard()
        if host is None:
            host = AgentHost.start(None, timeouts)
        played = tuple(
            a.settings.target.agent
            for a in workflow.agents
            if a.settings.target.kind == "adk" and a.settings.target.model == "expected"
        )
        host.preload(agents, played)
        self._warm = host

    def take(self, agents: list[tuple[str, Path]]) -> AgentHost | None:
        """The host `warm_up` started for exactly these agents. A warm host for other agents is stale and is
        discarded, never handed a run it did not import; the taken host is waited for by `finish`."""
        from adk_eval_gate.targets.agent_host import named

        host, self._warm = self._warm, None
        if host is None:
            return None
        if agents and host.agents == named(agents):
            self._finishing.append(host)
            return host
        host.discard()
        return None

    def finish(self) -> None:
        """Waits for the hosts the run took: they write ADK's eval history while the caller writes the results,
        so this comes after. Hosts never taken (the command stopped first) are discarded."""
        if self._early is not None:
            from adk_eval_gate.targets.agent_host import AgentHost  # only with a host: `history show` never needs it

            early, self._early = self._early, None
            AgentHost(early, self.timeouts_or_default).discard()
        if self._warm is not None:
            warm, self._warm = self._warm, None
            warm.discard()
        while self._finishing:
            self._finishing.pop().wait()

    @property
    def timeouts_or_default(self) -> HostTimeouts:
        """For tearing down: a bad `ADK_EVAL_GATE_HOST_TIMEOUTS` was said already, and must not stop the cleanup."""
        try:
            return self.timeouts
        except InputError:
            return HostTimeouts()
