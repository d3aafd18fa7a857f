"""A test agent whose scripted model misbehaves on request: it raises, hangs, fails transiently, or reads state."""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import struct
from collections.abc import AsyncGenerator
from pathlib import Path

from google.adk.agents import LlmAgent
from google.adk.models import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.adk.tools.tool_context import ToolContext
from google.genai import errors, types

FLAKY_FAILURES: dict[str, int] = {}


def get_name(tool_context: ToolContext) -> str:
    """Return the user's name from the session state."""
    return str(tool_context.state.get("name", "unknown"))


def _text(text: str) -> LlmResponse:
    return LlmResponse(content=types.Content(role="model", parts=[types.Part(text=text)]))


def _write_to_the_run(data: bytes) -> None:
    """A frame of `data` on every Unix socket this process has open to a listening path (its worker's connection
    to the run), as an agent that found it among its file descriptors could."""
    for name in os.listdir("/proc/self/fd"):
        try:
            sock = socket.socket(fileno=os.dup(int(name)))
        except OSError:
            continue
        with sock:
            try:
                if sock.family == socket.AF_UNIX and sock.getpeername():
                    sock.sendall(struct.pack("!I", len(data)) + data)
            except OSError:
                continue


class FaultyLlm(BaseLlm):
    model: str = "scripted-faulty"

    @classmethod
    def supported_models(cls) -> list[str]:
        return [r"scripted-faulty"]

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        last = llm_request.contents[-1]
        result = next((p.function_response for p in last.parts or [] if p.function_response), None)
        if result is not None:
            yield _text(f"Your name is {result.response.get('result')}.")
            return
        prompt = " ".join(p.text for p in last.parts or [] if p.text).lower()
        if "count me" in prompt:  # how many calls are in flight at once, across every worker process
            folder = Path(os.environ["FAULTY_INFLIGHT_DIR"])
            mine = folder / f"{os.getpid()}-{id(llm_request)}"
            mine.touch()
            await asyncio.sleep(0.3)
            with (folder.parent / "inflight.log").open("a") as log:
                log.write(f"{len(list(folder.iterdir()))}\n")
            mine.unlink()
        if "how were you started" in prompt:  # a worker spawned as a fresh interpreter, or forked from the host
            with open("/proc/self/cmdline", "rb") as cmdline:
                yield _text("spawned" if b"spawned_main" in cmdline.read() else "forked")
            return
        if "die now" in prompt:
            os._exit(3)  # the whole process vanishes, as a segfaulting native extension would make it
        if "speak nonsense" in prompt:  # the pull request's code writing to its worker's connection to the run
            _write_to_the_run(b"\x80 not json")
            await asyncio.sleep(3600)
        if "kill me" in prompt:
            os.kill(os.getpid(), signal.SIGKILL)  # as the kernel's OOM killer ends a process
            await asyncio.sleep(3600)
        if "crash" in prompt:
            raise RuntimeError("model exploded")
        if "hang" in prompt:
            await asyncio.sleep(3600)
        if "flaky" in prompt:
            key = prompt + os.environ.get("FLAKY_KEY", "")
            FLAKY_FAILURES[key] = FLAKY_FAILURES.get(key, 0) + 1
            if FLAKY_FAILURES[key] == 1:
                raise errors.ServerError(
                    503, {"error": {"code": 503, "message": "overloaded", "status": "UNAVAILABLE"}}
                )
        if "name" in prompt:
            yield LlmResponse(
                content=types.Content(
                    role="model", parts=[types.Part(function_call=types.FunctionCall(name="get_name", args={}))]
                )
            )
            return
        yield _text(f"echo: {prompt}")


root_agent = LlmAgent(name="faulty", model=FaultyLlm(), instruction="Test agent.", tools=[get_name])
