"""Starting the agent host (agent_host.py): its process, the agents' `.env`, and whether this platform may fork
at all. Kept light (no asyncio, no pydantic), so a run can start the host before anything else; the messages both
sides exchange are in host_messages.py.
"""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Literal, TextIO

# What our own process takes from an agent folder's `.env`: the judges' model credentials, as google-genai reads
# them (llm/client.py). Never a proxy, a CA bundle, an endpoint (GOOGLE_GEMINI_BASE_URL would send the key to the
# pull request's server), a credentials file, PYTHON* or LD_*: those would steer how this process connects.
JUDGE_CREDENTIALS = (
    "GOOGLE_API_KEY",
    "GEMINI_API_KEY",
    "GOOGLE_GENAI_USE_VERTEXAI",
    "GOOGLE_CLOUD_PROJECT",
    "GOOGLE_CLOUD_LOCATION",
)


def agent_dotenv(reference: str, base_dir: Path) -> dict[str, str]:
    """The agent folder's `.env` as `adk eval` reads it, parsed without touching any environment ({} when there is
    none, or ADK_DISABLE_LOAD_DOTENV is set)."""
    folder = Path(reference)
    folder = folder if folder.is_absolute() else base_dir / folder
    env_file = folder / ".env"
    if not folder.is_dir() or not env_file.is_file() or os.environ.get("ADK_DISABLE_LOAD_DOTENV"):
        return {}
    from dotenv import dotenv_values  # a google-adk dependency

    return {name: value for name, value in dotenv_values(env_file).items() if value is not None}


def load_agent_dotenv(reference: str, base_dir: Path) -> None:
    """The `.env` into the environment of the process the agent runs in (never overriding it), as `adk eval` loads
    it: the agent host, a worker, or the run's own process when the agent runs there (no token held, agent_host.
    in_own_process), whose environment is then the agent's anyway."""
    for name, value in agent_dotenv(reference, base_dir).items():
        os.environ.setdefault(name, value)


def take_judge_credentials(reference: str, base_dir: Path) -> None:
    """What the run's own process (the judges) takes from an agent's `.env` while the agent runs elsewhere: the
    model credentials of JUDGE_CREDENTIALS only, never overriding the workflow's (docs/trust.md)."""
    values = agent_dotenv(reference, base_dir)
    for name in JUDGE_CREDENTIALS:
        if values.get(name):
            os.environ.setdefault(name, values[name])


def fork_supported(platform: str = sys.platform) -> bool:
    """Forking from a process that has imported libraries is known safe on Linux only: macOS's system frameworks
    may hold locks or threads a forked child inherits broken (CPython defaults to spawn there since 3.8 for that
    reason), and Windows has no fork. Elsewhere workers are spawned (worker_start_method)."""
    return platform.startswith("linux") and hasattr(os, "fork")


def host_supported(platform: str = sys.platform) -> bool:
    """Whether an agent host can run here at all: it talks over Unix sockets, which asyncio has nowhere on
    Windows. Where it cannot, the agents run in the run's own process."""
    return not platform.startswith(("win32", "cygwin")) and hasattr(socket, "AF_UNIX")


def worker_start_method(platform: str = sys.platform) -> Literal["fork", "spawn"]:
    """Workers are forked from the warm host where that is known safe, else each is a fresh interpreter that
    imports google-adk and the agent itself (a second or two of CPU apiece, and no fork)."""
    return "fork" if fork_supported(platform) else "spawn"


def os_thread_count() -> int:
    """This process's threads as the kernel counts them: a native library's threads (grpc's, a C extension's)
    make a fork as unsafe as Python's own, and `threading` knows nothing of them. Python's count only where the
    kernel does not say (no /proc)."""
    try:
        return len(os.listdir("/proc/self/task"))
    except OSError:
        import threading

        return threading.active_count()


def spawn() -> tuple[subprocess.Popen[bytes], socket.socket, Path]:
    """The host process, its control socket, and a private directory for the workers' socket."""
    ours, theirs = socket.socketpair()
    code = (
        f"import sys; sys.path[:] = {sys.path!r}; from adk_eval_gate.targets.host_process import main; "
        f"main({theirs.fileno()})"
    )
    from adk_eval_gate.core.foreign_lines import forward_lines
    from adk_eval_gate.core.redaction import child_env  # the pull request's agents run there: no command files

    # Its output and its workers' (the agents' prints, whatever they write to fd 1 or 2) reach the job log through
    # this process's streams, masked, stripped and with no line the runner would take for a workflow command.
    process = subprocess.Popen(
        [sys.executable, "-c", code],
        pass_fds=[theirs.fileno()],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=child_env(),
    )
    theirs.close()
    assert process.stdout is not None and process.stderr is not None
    forward_lines(process.stdout, _writer(sys.stdout))
    forward_lines(process.stderr, _writer(sys.stderr))
    return process, ours, Path(tempfile.mkdtemp(prefix="adk-eval-gate-"))


def _writer(stream: TextIO) -> Callable[[str], None]:
    def write(text: str) -> None:
        stream.write(text)
        stream.flush()

    return write


_ADK_TARGET = re.compile(r"""kind\s*:\s*["']?adk["']?\s*(?:[,}#\n]|$)""")


def names_adk_target(config: Path) -> bool:
    """Whether the config's text (not yet validated) names an `adk` target: then starting the host before the
    config is read pays off, since google-adk takes a second to import."""
    try:
        text = config.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False
    return host_supported() and _ADK_TARGET.search(text) is not None
