"""How long the run waits on the agent host and its workers, named in one place.

None of them bounds a case (that is `run.timeout`) or the run (`run.job_timeout`): each bounds a wait on a
process that should answer at once, so a process that never does costs that long, not for ever. The defaults
suit a hosted runner; `ADK_EVAL_GATE_HOST_TIMEOUTS` overrides any of them for a slower machine or a slow agent
(docs/targets-and-judges.md), e.g. `worker_start=180,host_exit=1800`.
"""

from __future__ import annotations

import dataclasses
import math
import os
from collections.abc import Mapping
from dataclasses import dataclass

from adk_eval_gate.core.clip import clip
from adk_eval_gate.core.errors import InputError

ENV_VAR = "ADK_EVAL_GATE_HOST_TIMEOUTS"


@dataclass(frozen=True)
class HostTimeouts:
    worker_start: float = 60.0
    """A forked worker builds the agent (its code imported by the host already) and says hello within this."""
    worker_exit: float = 5.0
    """After its last job a worker closes its connection within this, or it is killed."""
    exit_report: float = 2.0
    """The host reports a dead worker's exit code (named in that case's error) within this, or it is 'unknown'."""
    history_send: float = 60.0
    """Once the run is done, the history writer takes what the run sent it within this, or it is cut off."""
    children_grace: float = 300.0
    """Once the run has gone, the host waits this long for its workers and history writer, then kills them."""
    host_exit: float = 600.0
    """The run waits this long for the host (writing ADK eval history) to end, then kills it."""


def host_timeouts(environ: Mapping[str, str] = os.environ) -> HostTimeouts:
    """The defaults, with what `ADK_EVAL_GATE_HOST_TIMEOUTS` (`name=seconds,...`) overrides; a bad entry is one
    line naming it."""
    text = environ.get(ENV_VAR, "").strip()
    if not text:
        return HostTimeouts()
    names = [field.name for field in dataclasses.fields(HostTimeouts)]
    values: dict[str, float] = {}
    for entry in (part.strip() for part in text.split(",")):
        name, equals, value = (piece.strip() for piece in entry.partition("="))
        if name not in names or not equals:
            raise InputError(
                None,
                ENV_VAR,
                f"{clip(entry, 40)!r} names none of the host's timeouts",
                f"write name=seconds, a name from {', '.join(names)}",
            )
        try:
            seconds = float(value)
        except ValueError:
            seconds = math.nan
        if not math.isfinite(seconds) or seconds <= 0:
            raise InputError(
                None, ENV_VAR, f"{name}: {clip(value, 40)!r} is not a positive number of seconds", f"e.g. {name}=120"
            )
        values[name] = seconds
    return HostTimeouts(**values)
