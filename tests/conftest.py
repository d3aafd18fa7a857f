from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.support.paths import AGENTS, ROOT

EXAMPLE = ROOT / "examples" / "hello_world"


# What a GitHub runner sets for the job running this suite; a test that needs Actions sets its own.
RUNNER_VARIABLES = (
    "GITHUB_ACTIONS",
    "GITHUB_EVENT_NAME",
    "GITHUB_EVENT_PATH",
    "GITHUB_STEP_SUMMARY",
    "GITHUB_OUTPUT",
    "GITHUB_REF",
    "GITHUB_BASE_REF",
    "GITHUB_SHA",
    "GITHUB_REPOSITORY",
    "GITHUB_RUN_ID",
    "GITHUB_TOKEN",
    "GITHUB_WORKSPACE",
    "GITHUB_RUN_ATTEMPT",
)


@pytest.fixture(autouse=True)
def outside_the_runner(monkeypatch):
    """In Actions the gate validates the job's own event payload strictly, logs annotations and finds the repository
    root from GITHUB_WORKSPACE: the suite's tests must not follow the runner's own job."""
    for name in RUNNER_VARIABLES:
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def example(tmp_path: Path) -> Path:
    """A private copy of the bundled example (tests may edit it)."""
    target = tmp_path / "hello_world"
    shutil.copytree(EXAMPLE, target, ignore=shutil.ignore_patterns("__pycache__", ".adk"))
    return target


@pytest.fixture
def write(tmp_path: Path):
    def _write(name: str, content: str | bytes) -> Path:
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")
        return path

    return _write


FAULTY_AGENT = AGENTS / "faulty"


def free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="session")
def api_server(tmp_path_factory):
    """A real `adk api_server` on 127.0.0.1 serving the example agent and the faulty test agent."""
    import os
    import subprocess
    import sys
    import time

    import requests

    agents = tmp_path_factory.mktemp("agents")
    shutil.copytree(EXAMPLE / "hello_world", agents / "hello_world", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(FAULTY_AGENT, agents / "faulty", ignore=shutil.ignore_patterns("__pycache__"))
    port = free_port()
    adk = Path(sys.executable).parent / "adk"
    env = {**os.environ, "ADK_DISABLE_LOAD_DOTENV": "1"}
    log = (agents / "server.log").open("w")
    process = subprocess.Popen(
        [str(adk), "api_server", "--host", "127.0.0.1", "--port", str(port), str(agents)],
        stdout=log,
        stderr=subprocess.STDOUT,
        env=env,
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        try:
            if requests.get(f"{url}/list-apps", timeout=1).ok:
                break
        except requests.RequestException:
            time.sleep(0.3)
    else:
        process.kill()
        raise RuntimeError(f"adk api_server did not start: {(agents / 'server.log').read_text()[-2000:]}")
    yield url
    process.terminate()
    process.wait(timeout=20)


@pytest.fixture
def gemini_env(monkeypatch):
    """Points google-genai at a fake Gemini (tests/support/fake_gemini.py): `gemini_env(server)`, with a key."""

    def use(server) -> None:
        monkeypatch.setenv("GOOGLE_API_KEY", "fake-judge-key")
        monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", server.url)
        monkeypatch.delenv("GOOGLE_GENAI_USE_VERTEXAI", raising=False)

    return use
