"""The run's custom metric process: the pull request's metric functions, run apart from this process while it
holds one of GitHub's tokens (criteria/custom_function.py says why and serves the calls there).

An object the run owns, as the command owns its agent hosts (targets/host_pool.py): the run's judge holds one
(`Judge.metric_process`), it starts the process at the first call, and the run closes it when it ends, before
the runner's command files are checked (core/command_files.py). No module keeps it: two runs in one process
(a test, AgentEvaluator) each have their own.
"""

from __future__ import annotations

import atexit
import json
import os
import subprocess
import sys
import threading
from typing import IO

from adk_eval_gate.core.json_types import JsonObject
from adk_eval_gate.core.redaction import child_env

_MAX_REPLY = 16 << 20  # a reply is a few numbers per invocation
# What the process runs: its module is named, not imported here (it imports this layer's criteria).
_SERVER = "adk_eval_gate.criteria.custom_function"


class MetricProcessError(Exception):
    """The function raised (said as it would be in process), or the process broke."""


class _Child:
    """One started process, importing the functions from `where` (working directory, sys.path)."""

    def __init__(self, where: tuple[str, tuple[str, ...]]) -> None:
        self.where = where
        code = f"import sys; sys.path[:] = {list(where[1])!r}; from {_SERVER} import serve; serve()"
        self._process = subprocess.Popen(
            [sys.executable, "-c", code],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=child_env(),
            cwd=where[0],
            text=True,
            errors="replace",
        )
        assert self._process.stderr is not None
        threading.Thread(target=_forward, args=(self._process.stderr,), daemon=True).start()

    @property
    def alive(self) -> bool:
        return self._process.poll() is None

    def call(self, call: JsonObject) -> JsonObject:
        assert self._process.stdin is not None and self._process.stdout is not None
        try:
            self._process.stdin.write(json.dumps(call) + "\n")
            self._process.stdin.flush()
            line = self._process.stdout.readline(_MAX_REPLY)
        except (OSError, ValueError):
            line = ""
        if not line:
            raise MetricProcessError(f"the custom metric process exited (code {self._process.poll()})")
        reply = json.loads(line)
        if not isinstance(reply, dict):
            raise MetricProcessError("the custom metric process answered out of protocol")
        return reply

    def close(self) -> None:
        if self._process.stdin is not None:
            self._process.stdin.close()
        try:
            self._process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self._process.kill()


class MetricProcess:
    """The run's one metric process, started at its first call and again when it died or the functions' import
    place changed (another run in this process may import from elsewhere); `close` ends it."""

    def __init__(self) -> None:
        self._lock = threading.Lock()  # one call at a time: a sync function blocked this process's loop the same
        self._child: _Child | None = None

    def call(self, call: JsonObject) -> JsonObject:
        where = (os.getcwd(), tuple(sys.path))
        with self._lock:
            if self._child is None or not self._child.alive or self._child.where != where:
                if self._child is not None:
                    self._child.close()
                self._child = _Child(where)
                atexit.register(self._child.close)  # should the run never reach its end
            return self._child.call(call)

    @property
    def pid(self) -> int | None:
        """The process's id while it runs (tests: it ends with the run)."""
        with self._lock:
            return self._child._process.pid if self._child is not None and self._child.alive else None

    def close(self) -> None:
        """The run is over: the process (the pull request's code) ends now, not at exit."""
        with self._lock:
            if self._child is not None:
                self._child.close()
                self._child = None


def _forward(stream: IO[str]) -> None:
    from adk_eval_gate.core.foreign_lines import inert  # the pull request's function printed it

    for line in stream:
        sys.stderr.write(inert(line))
        sys.stderr.flush()
