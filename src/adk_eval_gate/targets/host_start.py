"""Starting the agent host (agent_host.py), and the message framing both sides use. Kept light (no asyncio), so
a run can start the host before anything else.

Messages on both channels (host control, each worker's connection) are length-prefixed, over Unix sockets only
this user can open: pickles from the run to the host and its workers, JSON from them to the run. The host and the
workers run the pull request's code, which could write to their sockets: the run, which holds GitHub's token,
never unpickles what they send (a pickle can run any code as it loads).
"""

from __future__ import annotations

import json
import os
import pickle
import re
import socket
import struct
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

_HEADER = struct.Struct("!I")


def pack(message: Any) -> bytes:
    data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    return _HEADER.pack(len(data)) + data


def pack_json(message: Any) -> bytes:
    """A message to the run, from a process that runs the pull request's code."""
    data = json.dumps(message).encode()
    return _HEADER.pack(len(data)) + data


def unpack_json(data: bytes) -> tuple | None:
    """A message the run received: a JSON array, as a tuple; anything else counts as the other side gone."""
    try:
        message = json.loads(data)
    except ValueError:
        return None
    return tuple(message) if isinstance(message, list) and message else None


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


def recv_blocking(sock: socket.socket) -> Any | None:
    header = _recv_exactly(sock, _HEADER.size)
    data = header and _recv_exactly(sock, _HEADER.unpack(header)[0])
    return None if data is None else pickle.loads(data)


def load_agent_dotenv(reference: str, base_dir: Path) -> None:
    """The agent folder's `.env`, loaded as `adk eval` loads it (never overriding the environment): before the
    host starts, so the host, its workers and this process (the judges) all see it."""
    folder = Path(reference)
    folder = folder if folder.is_absolute() else base_dir / folder
    env_file = folder / ".env"
    if not folder.is_dir() or not env_file.is_file() or os.environ.get("ADK_DISABLE_LOAD_DOTENV"):
        return
    from dotenv import load_dotenv  # a google-adk dependency

    load_dotenv(env_file, override=False)


def fork_supported() -> bool:
    return hasattr(os, "fork") and sys.platform != "win32"


def spawn() -> tuple[subprocess.Popen, socket.socket, Path]:
    """The host process, its control socket, and a private directory for the workers' socket."""
    ours, theirs = socket.socketpair()
    code = (
        f"import sys; sys.path[:] = {sys.path!r}; from adk_eval_gate.targets.host_process import main; "
        f"main({theirs.fileno()})"
    )
    process = subprocess.Popen([sys.executable, "-c", code], pass_fds=[theirs.fileno()], stdin=subprocess.DEVNULL)
    theirs.close()
    return process, ours, Path(tempfile.mkdtemp(prefix="adk-eval-gate-"))


_ADK_TARGET = re.compile(r"""kind\s*:\s*["']?adk["']?\s*(?:[,}#\n]|$)""")
_early: list[tuple[subprocess.Popen, socket.socket, Path]] = []  # agents not named yet


def warm_up_early(config: Path) -> None:
    """Starts the agent host before the config is even validated when its text names an `adk` target: the host
    spends the next second importing google-adk, which the run would otherwise wait for. `agent_host.warm_up`
    then names the agents, or discards the host when the config runs none here."""
    if _early:  # already started for this run
        return
    try:
        text = config.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return
    if fork_supported() and _ADK_TARGET.search(text):
        _early.append(spawn())


def take_early() -> tuple[subprocess.Popen, socket.socket, Path] | None:
    return _early.pop() if _early else None
