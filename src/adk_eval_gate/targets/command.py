"""`command` target: any executable, in any language, speaking a small JSON protocol (version 1).

One process per case and run. It reads one JSON request on stdin:

    {"protocol": 1, "eval_set_id": "...", "eval_id": "...", "run": 0,
     "session_input": {"app_name": "...", "user_id": "...", "state": {...}} | null,
     "turns": [{"invocation_id": "...", "user_content": {"role": "user", "parts": [{"text": "..."}]}}],
     "history": [<ADK events>]}   (only for an agents-cli case with earlier turns: the session's history)

and prints one JSON object on stdout, with one entry per turn, in one of these forms:

    {"turns": [{"events": [<ADK events, as adk api_server returns them>]}]}
    {"turns": [{"response": "final text", "tool_calls": [{"name": "...", "args": {...}}]}]}
    {"invocations": [<ADK Invocation JSON>]}

or `{"error": "message"}` to report that the case could not be run. A non-zero exit status, output that is not
JSON, more than 16 MiB of output per turn, or a hang past the timeout make the case an error; the other cases are
unaffected. The process runs in its own session, and its whole process group is killed when the case ends.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import time
from pathlib import Path
from typing import Any

from google.genai import types as genai_types
from pydantic import ValidationError

from adk_eval_gate.config.target_settings import CommandTargetSettings as CommandSettings
from adk_eval_gate.core.clip import clip, clip_end, masked_lines, single_line
from adk_eval_gate.core.files import scrub_data
from adk_eval_gate.core.json_types import JsonObject
from adk_eval_gate.core.redaction import child_env
from adk_eval_gate.evalsets.adk_eval_schema import EvalCase, IntermediateData, Invocation
from adk_eval_gate.evalsets.agents_cli_dataset import prior_events
from adk_eval_gate.targets.case_run import CaseRun, TargetError
from adk_eval_gate.targets.events import events_to_invocation

PROTOCOL_VERSION = 1
# A turn's reply is text and tool calls; far more is an agent gone wrong, and holding it all would exhaust memory.
MAX_TURN_BYTES = 16 * 1024 * 1024
STDERR_TAIL_BYTES = 64 * 1024  # only the last line of stderr is reported
EXIT_GRACE_SECONDS = 1.0
_CHUNK = 256 * 1024


async def _feed(process: asyncio.subprocess.Process, payload: bytes) -> None:
    """The request; a command that exits without reading it is judged by its output, not by our broken pipe."""
    assert process.stdin is not None
    with contextlib.suppress(BrokenPipeError, ConnectionResetError):
        process.stdin.write(payload)
        await process.stdin.drain()
        process.stdin.close()


async def _read_capped(stream: asyncio.StreamReader | None, into: bytearray, limit: int) -> bool:
    """Reads to EOF; False as soon as the output passes `limit` (what was read stays bounded by it)."""
    assert stream is not None
    while chunk := await stream.read(_CHUNK):
        if len(into) + len(chunk) > limit:
            return False
        into += chunk
    return True


async def _read_tail(stream: asyncio.StreamReader | None, into: bytearray) -> bool:
    assert stream is not None
    while chunk := await stream.read(_CHUNK):
        into += chunk
        del into[:-STDERR_TAIL_BYTES]
    return True


async def _exited(process: asyncio.subprocess.Process) -> int:
    """The exit status as soon as the command itself ends, whoever still holds its pipes."""
    while process.returncode is None:
        await asyncio.sleep(0.02)
    return process.returncode


def _over_limit(limit: int) -> str:
    return (
        f"stdout passed the output limit of {limit // (1024 * 1024)} MiB ({MAX_TURN_BYTES // (1024 * 1024)} MiB "
        "per turn); the command was stopped"
    )


def _kill_group(process: asyncio.subprocess.Process) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)


def request_for(eval_set_id: str, case: EvalCase, run: int) -> JsonObject:
    assert case.conversation is not None
    request = {
        "protocol": PROTOCOL_VERSION,
        "eval_set_id": eval_set_id,
        "eval_id": case.eval_id,
        "run": run,
        "session_input": case.session_input.model_dump(mode="json") if case.session_input else None,
        "turns": [
            {
                "invocation_id": inv.invocation_id,
                "user_content": inv.user_content.model_dump(mode="json", exclude_none=True),
            }
            for inv in case.conversation
        ],
    }
    if history := prior_events(case):  # an agents-cli Shape B case: the session's earlier events (ADK Event JSON)
        request["history"] = history
    return request


def _turn_invocation(turn: object, expected: Invocation, index: int) -> Invocation:
    if not isinstance(turn, dict):
        raise TargetError(f"turns[{index}] is not an object")
    if "events" in turn:
        if not isinstance(turn["events"], list):
            raise TargetError(f"turns[{index}].events is not a list")
        return events_to_invocation(turn["events"], expected.user_content)
    response = turn.get("response")
    calls = turn.get("tool_calls") or []
    return Invocation(
        user_content=expected.user_content,
        final_response=genai_types.Content(role="model", parts=[genai_types.Part(text=response)])
        if response is not None
        else None,
        intermediate_data=IntermediateData(tool_uses=[genai_types.FunctionCall.model_validate(c) for c in calls]),
    )


def parse_response(data: object, case: EvalCase) -> tuple[Invocation, ...]:
    assert case.conversation is not None
    if not isinstance(data, dict):
        raise TargetError("stdout is JSON but not an object")
    if data.get("error"):
        raise TargetError(f"the command reported: {clip(single_line(str(data['error'])), 300)}")
    try:
        if "invocations" in data:
            return tuple(Invocation.model_validate(item) for item in data["invocations"])
        if "turns" in data and isinstance(data["turns"], list):
            return tuple(
                _turn_invocation(t, e, i)
                for i, (t, e) in enumerate(zip(data["turns"], case.conversation, strict=False))
            )
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise TargetError(f"stdout has an invalid {where or 'value'}: {first['msg']}") from None
    raise TargetError("stdout has neither `turns` nor `invocations`")


def _exit_error(returncode: int | None, stderr: bytearray) -> TargetError:
    """The exit status and the last line of stderr worth showing."""
    # Masked before the split and the cut; `clip_end` also drops a secret's end that the tail's first
    # bytes may have kept (a tail that starts inside a character would decode to U+FFFD before it).
    text = stderr.decode(errors="replace").lstrip("\ufffd")
    lines = masked_lines(clip_end(text, STDERR_TAIL_BYTES))
    tail = next((line for line in reversed(lines) if line.strip()), "")
    return TargetError(f"command exited with status {returncode}" + (f": {clip(tail.strip(), 300)}" if tail else ""))


def _invocations(stdout: bytearray, case: EvalCase) -> tuple[Invocation, ...]:
    """The command's answer, JSON in the protocol's shape, as the case's invocations."""
    try:
        data = scrub_data(json.loads(bytes(stdout).decode("utf-8")))
    except (UnicodeDecodeError, ValueError, RecursionError):
        snippet = clip(single_line(bytes(stdout).decode(errors="replace")), 80)
        raise TargetError(f"stdout is not JSON: {snippet!r}") from None
    try:
        return parse_response(data, case)
    except (TypeError, AttributeError, KeyError, ValueError) as exc:  # a shape the protocol does not have
        raise TargetError(f"stdout does not follow the protocol: {clip(single_line(str(exc)), 200)}") from None


class CommandTarget:
    kind = "command"

    def __init__(self, settings: CommandSettings, base_dir: Path) -> None:
        self._settings = settings
        self._cwd = Path(settings.cwd) if settings.cwd else base_dir
        if not self._cwd.is_absolute():
            self._cwd = base_dir / self._cwd
        program = settings.command[0]
        # A relative path to a script resolves like every other path in the config; a bare name uses PATH.
        if "/" in program and not Path(program).is_absolute():
            program = str(base_dir / program)
        self._argv = [program, *settings.command[1:]]

    async def start(self) -> None:
        return None

    async def run_case(self, eval_set_id: str, case: EvalCase, run: int) -> CaseRun:
        if case.conversation is None:
            raise TargetError(
                "conversation_scenario cases need the adk or http target: the command protocol sends every user turn "
                "up front"
            )
        payload = json.dumps(request_for(eval_set_id, case, run)).encode("utf-8", "replace")
        env = child_env(self._settings.env)
        limit = MAX_TURN_BYTES * max(1, len(case.conversation))
        try:
            # Its own session: on timeout or when done, the whole group goes, children included.
            process = await asyncio.create_subprocess_exec(
                *self._argv,
                cwd=self._cwd,
                env=env,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                start_new_session=True,
            )
        except (OSError, ValueError) as exc:
            raise TargetError(f"cannot start {self._argv[0]}: {getattr(exc, 'strerror', None) or exc}") from None
        started = time.monotonic()
        stdout, stderr = bytearray(), bytearray()
        readers: list[asyncio.Future[Any]] = [
            asyncio.ensure_future(_feed(process, payload)),
            asyncio.ensure_future(_read_capped(process.stdout, stdout, limit)),
            asyncio.ensure_future(_read_tail(process.stderr, stderr)),
        ]
        try:
            exited = asyncio.ensure_future(_exited(process))
            readers.append(exited)
            await asyncio.wait([exited, readers[1]], return_when=asyncio.FIRST_COMPLETED)
            if readers[1].done() and readers[1].result() is False:
                raise TargetError(_over_limit(limit))
            await exited
            # Children that outlive the command may hold our pipes open: give them a moment, then end the group.
            await asyncio.wait(readers[1:3], timeout=EXIT_GRACE_SECONDS)
            if readers[1].done() and readers[1].result() is False:
                raise TargetError(_over_limit(limit))
        finally:
            _kill_group(process)
            for task in readers:
                task.cancel()
            await _exited(process)
            # process.wait() would also wait for every pipe to close, which a stalled reader or an escaped
            # grandchild can delay forever: close them ourselves.
            transport = getattr(process, "_transport", None)
            if transport is not None:
                transport.close()
        if process.returncode != 0:
            raise _exit_error(process.returncode, stderr)
        invocations = _invocations(stdout, case)
        elapsed = round(time.monotonic() - started, 3)
        return CaseRun(eval_set_id, case.eval_id, run, invocations, duration_seconds=elapsed)

    async def aclose(self) -> None:
        return None
