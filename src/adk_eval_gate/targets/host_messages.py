"""Every message between the run, the agent host (agent_host.py), its workers and its history writer: one frozen
dataclass each, framed and coded here only, dispatched by type (`match`).

Two directions, two codings. Towards the host and its children (`ToHost`, `ToWorker`, `ToHistorian`): pickles,
because a fork request carries the target and its settings, and the run is the trusted side. Towards the run
(`FromHost`, `FromWorker`): JSON only. The host and its workers run the pull request's code, which could write to
their sockets, and the run holds GitHub's token: it never unpickles what they send (a pickle can run any code as
it loads). Replies are decoded by one pydantic discriminated union on `type`; one that is not a known shape,
field for field, decodes to `Malformed`, never to a guess.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import pickle
import socket
import struct
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import ConfigDict, Field, PlainValidator, TypeAdapter, ValidationError, with_config

from adk_eval_gate.core.clip import clip
from adk_eval_gate.core.json_types import JsonObject
from adk_eval_gate.core.numbers import in_range
from adk_eval_gate.evalsets.adk_eval_schema import Invocation, dump_invocation
from adk_eval_gate.llm.client import UsageStats
from adk_eval_gate.targets.case_run import CaseRun, Target

if TYPE_CHECKING:
    from adk_eval_gate.targets.runner import RunnerSettings

HEADER = struct.Struct("!I")  # every frame: its length, then its bytes
MAX_REPLY_BYTES = 256 * 1024 * 1024  # a result is a case's invocations; a length beyond this is not a reply


# --- the run → the host and its children (pickled) -------------------------------------------------------------


@dataclass(frozen=True)
class Preload:
    """Import these agents (reference, base directory) and say `Ready`; then start workers as `start_method`
    says."""

    agents: tuple[tuple[str, str], ...]
    children_grace_seconds: float
    start_method: Literal["fork", "spawn"]  # how workers start (host_start.worker_start_method)
    played: tuple[str, ...] = ()  # references whose model is played offline: no key is needed (expected_model.py)


@dataclass(frozen=True)
class Fork:
    """Fork `count` workers running `target` with `settings`, each calling back on `address`; start the history
    writer too when `writes_history` (once)."""

    target: Target
    count: int
    settings: RunnerSettings
    address: str
    writes_history: bool


@dataclass(frozen=True)
class HoldInvocations:
    """Invocations the history writer prepares while the agent runs (results/eval_history.Ref names them)."""

    key: tuple[object, ...]  # adk_history.HeldKey
    invocations: list[JsonObject]


@dataclass(frozen=True)
class WriteHistory:
    """ADK eval history of one eval set, to the history writer (or to the host, if the writer never called)."""

    agent: str
    folder: str
    eval_set_id: str
    results: list[JsonObject]


@dataclass(frozen=True)
class RunJob:
    """One (case, run) for a worker; `index` names it in the worker's replies."""

    index: int
    eval_set_id: str
    case: JsonObject
    run: int


@dataclass(frozen=True)
class Finish:
    """No more jobs: a worker cancels what it still holds (nothing, unless the run stopped) and closes."""


ToHost = Preload | Fork | WriteHistory
ToWorker = RunJob | Finish
ToHistorian = HoldInvocations | WriteHistory


def pack(message: ToHost | ToWorker | ToHistorian) -> bytes:
    data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    return HEADER.pack(len(data)) + data


def _recv_exactly(sock: socket.socket, size: int) -> bytes | None:
    chunks, left = [], size
    while left:
        try:
            chunk = sock.recv(left)
        except ConnectionResetError:  # the other side closed with our notices unread: it has gone all the same
            return None
        if not chunk:
            return None
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def recv_from_run(sock: socket.socket) -> object | None:
    """The next message from the run (read by the host or the history writer, blocking); None once it has gone.
    The caller dispatches by type and ignores what it does not know."""
    header = _recv_exactly(sock, HEADER.size)
    data = header and _recv_exactly(sock, HEADER.unpack(header)[0])
    return None if data is None else pickle.loads(data)


async def read_from_run(reader: asyncio.StreamReader) -> object | None:
    """The same, read by a worker's event loop."""
    try:
        size = HEADER.unpack(await reader.readexactly(HEADER.size))[0]
        message: object = pickle.loads(await reader.readexactly(size))
        return message
    except (asyncio.IncompleteReadError, ConnectionError):
        return None


# --- the host and its children → the run (JSON) -----------------------------------------------------------------
# Each reply names its kind in `type` (its default: a sender never writes it) and is decoded by one pydantic
# discriminated union (`_REPLY`): strict (an int is no bool, a number no string) and closed (an unknown field is
# refused), so what the pull request's code could write is either one of these, field for field, or `Malformed`.

_WIRE = ConfigDict(strict=True, extra="forbid")


@with_config(_WIRE)
@dataclass(frozen=True)
class Ready:
    """The host imported the agents (`error` None), or why it could not."""

    error: str | None
    type: Literal["ready"] = "ready"


@with_config(_WIRE)
@dataclass(frozen=True)
class Forked:
    pids: tuple[int, ...]
    type: Literal["forked"] = "forked"


@with_config(_WIRE)
@dataclass(frozen=True)
class Exited:
    """A child of the host ended; `code` as os.waitstatus_to_exitcode gives it (negative: the signal)."""

    pid: int
    code: int
    type: Literal["exited"] = "exited"


@with_config(_WIRE)
@dataclass(frozen=True)
class Hello:
    """The first message on a worker's (or the history writer's) connection."""

    pid: int
    role: Literal["worker", "historian"]
    type: Literal["hello"] = "hello"


@with_config(_WIRE)
@dataclass(frozen=True)
class Started:
    """A worker began running job `index` (it holds more than it runs): if the worker dies now, this is the case
    that was running."""

    index: int
    type: Literal["started"] = "started"


@with_config(_WIRE)
@dataclass(frozen=True)
class Result:
    index: int
    run: Annotated[CaseRun, PlainValidator(decode_run)]  # checked by hand: see decode_run
    type: Literal["result"] = "result"


@with_config(_WIRE)
@dataclass(frozen=True)
class Log:
    """A line the agent's libraries logged, the first time it came."""

    text: str
    type: Literal["log"] = "log"


@with_config(_WIRE)
@dataclass(frozen=True)
class LogCounts:
    """A worker's last word: how often each line it sent once came again."""

    counts: dict[str, int]
    type: Literal["log_counts"] = "log_counts"


@with_config(_WIRE)
@dataclass(frozen=True)
class Fatal:
    """The worker could not start the agent; every worker would fail the same way."""

    reason: str
    type: Literal["fatal"] = "fatal"


@dataclass(frozen=True)
class Malformed:
    """What arrived was none of the messages above (decoded by no one: a pickle is never loaded)."""

    reason: str


FromHost = Ready | Forked | Exited
FromWorker = Hello | Started | Result | Log | LogCounts | Fatal
Reply = FromHost | FromWorker


def pack_json(message: Reply) -> bytes:
    """A message to the run, from a process that runs the pull request's code. `type` leads, as it always has."""
    if isinstance(message, Result):
        fields: JsonObject = {"index": message.index, "run": encode_run(message.run), "type": message.type}
    else:
        fields = dataclasses.asdict(message)
    data = json.dumps({"type": message.type, **fields}).encode()
    return HEADER.pack(len(data)) + data


async def read_reply(reader: asyncio.StreamReader) -> Reply | Malformed | None:
    """The next message from the host or a worker (read by the run); None once the other side has gone."""
    try:
        size = HEADER.unpack(await reader.readexactly(HEADER.size))[0]
        if size > MAX_REPLY_BYTES:
            return Malformed(f"a message of {size} bytes")
        return unpack_json(await reader.readexactly(size))
    except (asyncio.IncompleteReadError, ConnectionError):
        return None


def unpack_json(data: bytes) -> Reply | Malformed:
    """One message the run received, checked field for field; anything else is `Malformed`."""
    try:
        return _REPLY.validate_json(data)
    except (KeyError, TypeError, ValueError) as exc:  # pydantic's ValidationError is a ValueError
        return Malformed(_why_malformed(data, exc))


def _why_malformed(data: bytes, exc: Exception) -> str:
    """Said as the run's log says it; only a message that failed is parsed a second time, to say why."""
    try:
        message = json.loads(data)
    except ValueError:
        return "not JSON"
    if not isinstance(message, dict) or not isinstance(kind := message.get("type"), str):
        return "not a message object"
    if kind not in _KINDS:
        return f"an unknown message type {clip(kind, 40)!r}"
    if set(message) - {f.name for f in dataclasses.fields(_KINDS[kind])}:
        return f"unknown fields in a {clip(kind, 40)!r} message"
    return f"a {clip(kind, 40)!r} message that does not fit its shape ({_error_name(exc)})"


def _error_name(exc: Exception) -> str:
    """Named as the checks by hand named it: a missing field a KeyError, a value out of its set a ValueError, a
    value of the wrong type a TypeError."""
    if not isinstance(exc, ValidationError):
        return type(exc).__name__  # raised by decode_run
    kind = exc.errors()[0]["type"]
    return (
        "KeyError" if kind == "missing" else "ValueError" if kind in ("literal_error", "value_error") else "TypeError"
    )


_KINDS: dict[str, type[Reply]] = {
    "ready": Ready,
    "forked": Forked,
    "exited": Exited,
    "hello": Hello,
    "started": Started,
    "result": Result,
    "log": Log,
    "log_counts": LogCounts,
    "fatal": Fatal,
}


def _int(value: object) -> int:
    if not isinstance(value, int) or isinstance(value, bool):
        raise TypeError("int")
    return value


def _str(value: object) -> str:
    if not isinstance(value, str):
        raise TypeError("str")
    return value


def _optional_str(value: object) -> str | None:
    return None if value is None else _str(value)


def _list(value: object) -> list[Any]:
    if not isinstance(value, list):
        raise TypeError("list")
    return value


def _number(value: object) -> float:
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        raise TypeError("number")
    if not in_range(value):  # a duration past ±MAX_MAGNITUDE would overflow the sums taken of it
        raise ValueError("number")
    return float(value)


# --- a case's run, as JSON ---------------------------------------------------------------------------------------


def encode_run(run: CaseRun) -> JsonObject:
    usage = run.simulator_usage
    return {
        "eval_set_id": run.eval_set_id,
        "eval_id": run.eval_id,
        "run": run.run,
        "error": run.error,
        "duration": run.duration_seconds,
        "simulator_usage": None if usage is None else {**dataclasses.asdict(usage), "unpriced": sorted(usage.unpriced)},
        "invocations": [dump_invocation(i) for i in run.invocations] if run.invocations is not None else None,
    }


def decode_run(data: object) -> CaseRun:
    if not isinstance(data, dict):
        raise TypeError("run")
    invocations = data["invocations"]
    if invocations is not None:
        invocations = _list(invocations)
    usage = data["simulator_usage"]
    if usage is not None:
        if not isinstance(usage, dict):
            raise TypeError("simulator_usage")
        usage = UsageStats(**{**usage, "unpriced": {_str(model) for model in _list(usage["unpriced"])}})
    return CaseRun(
        _str(data["eval_set_id"]),
        _str(data["eval_id"]),
        _int(data["run"]),
        tuple(Invocation.model_validate(i) for i in invocations) if invocations is not None else None,
        _optional_str(data["error"]),
        _number(data["duration"]),
        usage,
        tuple(invocations) if invocations is not None else None,
    )


# Built once, when the module is imported (here, below `decode_run`, which it calls): it is immutable, and building
# it per message would cost more than the decoding it does.
_REPLY: TypeAdapter[Reply] = TypeAdapter(Annotated[Reply, Field(discriminator="type")])
