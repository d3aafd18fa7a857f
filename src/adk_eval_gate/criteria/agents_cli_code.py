"""agents-cli code metrics (`custom_function` / `custom_function_file`), scored as the SDK scores them, isolated.

The function gets the SDK's `instance` (evalsets/agents_cli_traces.py) and its result follows the SDK's rules;
anything else, an exception, a crash or a hang is an error for that case, never a quiet pass. The code comes from
the pull request, so it runs as the agent does: in a child process (`python -I`, agents_cli_child.py) with the
environment child_env gives code from a pull request (no GitHub token), its working directory the project root
(the workflow's folder, where agents-cli runs `eval grade`), killed with its process group after `TIMEOUT_SECONDS`.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import sys
import weakref
from dataclasses import dataclass
from pathlib import Path

from adk_eval_gate.core.clip import clip, last_line
from adk_eval_gate.core.json_types import JsonObject
from adk_eval_gate.core.numbers import MAX_MAGNITUDE, in_range
from adk_eval_gate.core.redaction import child_env

CHILD = Path(__file__).with_name("agents_cli_child.py")
# agents-cli retries a transient failure for up to 120 s; a metric still running well past that is stuck.
TIMEOUT_SECONDS = 180.0
MAX_OUTPUT_BYTES = 4 * 1024 * 1024
_RANGE = f"a finite number within ±{MAX_MAGNITUDE:g}"
# One semaphore per event loop (a run's `asyncio.run`), gone with the loop: keyed by the loop itself, not its id,
# which a later run's loop may reuse while the old semaphore, bound to the dead loop, would still be found.
_slots: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Semaphore] = weakref.WeakKeyDictionary()


@dataclass(frozen=True)
class CodeResult:
    score: float | None
    explanation: str | None = None
    error: str | None = None


def _slot() -> asyncio.Semaphore:
    """One metric process per core at a time: hundreds of (case, run, metric) jobs arrive together."""
    loop = asyncio.get_running_loop()
    slot = _slots.get(loop)
    if slot is None:
        slot = _slots[loop] = asyncio.Semaphore(max(1, os.cpu_count() or 1))
    return slot


def read_result(data: object) -> CodeResult:
    """The child's answer → a score or an error. A score must be a finite number (the SDK's float field also takes
    a numeric string and a bool); an explanation is kept as text."""
    if not isinstance(data, dict):
        return CodeResult(None, error="the metric process answered something other than a JSON object")
    if data.get("error"):
        return CodeResult(None, error=str(data["error"]))
    value = data.get("score")
    explanation = data.get("explanation")
    explanation = None if explanation is None else str(explanation)
    try:
        score = float(value) if isinstance(value, (int, float, str)) else None
    except ValueError:
        score = None
    if score is None or not in_range(score):
        return CodeResult(None, explanation, f"the metric returned score {clip(repr(value), 80)}, not {_RANGE}")
    return CodeResult(score, explanation)


def _kill_group(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


async def run_code_metric(name: str, source: str, instance: JsonObject, cwd: Path) -> CodeResult:
    request = json.dumps({"name": name, "source": source, "instance": instance}).encode()
    async with _slot():
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            "-I",
            str(CHILD),
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            cwd=str(cwd),
            env=child_env(),
            start_new_session=True,
        )
        try:
            out, err = await asyncio.wait_for(process.communicate(request), TIMEOUT_SECONDS)
        except asyncio.TimeoutError:
            _kill_group(process.pid)
            await process.wait()
            return CodeResult(None, error=f"metric {name!r} did not finish within {TIMEOUT_SECONDS:g} s")
        _kill_group(process.pid)  # whatever the metric started in the background goes with it
    if len(out) > MAX_OUTPUT_BYTES:
        return CodeResult(None, error=f"metric {name!r} printed more than {MAX_OUTPUT_BYTES // 2**20} MiB")
    lines = out.decode("utf-8", "replace").strip().splitlines()
    if process.returncode != 0 or not lines:
        tail = last_line(err.decode("utf-8", "replace"), 300, "no output")  # masked before the cut
        return CodeResult(None, error=f"metric {name!r} process exited with status {process.returncode}: {tail}")
    try:
        return read_result(json.loads(lines[-1]))
    except ValueError:
        return CodeResult(None, error=f"metric {name!r} process answered no JSON result")
