"""The process holding GitHub's token is sealed before the pull request's code runs (issue 34, docs/trust.md "Our
own process is sealed"), run as the Action's container runs it (its entry, `-P`, the token as an input), against
a fake GitHub on 127.0.0.1:

* an agent folder's `.env` naming a proxy steers the agent alone: every GitHub call goes straight to GitHub (a
  recording proxy sees none), while the agent still sees every value of its `.env`;
* a `setup:` that rewrites a module of the gate the run imports later never has it run in our process (the
  marker it would write is absent) and fails the run in one line; one that drops a `sitecustomize.py` changes
  nothing in ours (it acts only where a fresh interpreter starts: the agent host, a pull request process anyway);
* a benign `setup:` (pip installing a small local package beside the gate) still works, and the agent imports it.

The gate runs from a copy of its package (PYTHONPATH), so a hostile setup rewrites the copy, never this checkout.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import ClassVar

import pytest

import adk_eval_gate
from tests.e2e.test_token_isolation import action_env
from tests.support.adk_required import adk
from tests.support.fake_github import FakeGitHub
from tests.support.loopback import LoopbackServer, reply

adk("agents")
HEAD, BASE = "c" * 40, "b" * 40
TOKEN = "ghs_" + "S" * 36
# a module `ci` imports only after setup has run (found by patching every module: today this one runs in `ci`)
LAZY_MODULE = Path("adk_eval_gate") / "targets" / "model_credentials.py"

AGENT = """
import os
from pathlib import Path
from typing import ClassVar

from google.adk.agents import LlmAgent
from google.adk.models import BaseLlm
from google.adk.models.llm_response import LlmResponse
from google.genai import types


class Scripted(BaseLlm):
    model: str = "scripted-seal"

    @classmethod
    def supported_models(cls):
        return [r"scripted-seal"]

    async def generate_content_async(self, llm_request, stream=False):
        seen = {name: os.environ.get(name) for name in ("SEAL_DOTENV", "HTTP_PROXY", "HTTPS_PROXY")}
        try:
            import sealbenign
            seen["benign"] = sealbenign.VALUE
        except ImportError:
            seen["benign"] = None
        Path(os.environ["SEAL_SEEN"]).write_text(__import__("json").dumps(seen))
        yield LlmResponse(content=types.Content(role="model", parts=[types.Part(text="sealed")]))


root_agent = LlmAgent(name="sealagent", model=Scripted(), instruction="Test agent.")
"""


class Recorder(BaseHTTPRequestHandler):
    seen: ClassVar[list[str]] = []

    def _any(self) -> None:
        Recorder.seen.append(f"{self.command} {self.path}")
        reply(self, 502, b"{}")

    do_GET = do_POST = do_PATCH = do_PUT = do_CONNECT = _any

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    (repo / "evals").mkdir(parents=True)
    (repo / "sealagent").mkdir()
    (repo / "sealagent" / "__init__.py").write_text("from . import agent  # noqa: F401\n")
    (repo / "sealagent" / "agent.py").write_text(AGENT)
    case = {
        "eval_id": "hello",
        "conversation": [
            {
                "invocation_id": "hello-1",
                "user_content": {"role": "user", "parts": [{"text": "hello"}]},
                "final_response": {"role": "model", "parts": [{"text": "sealed"}]},
            }
        ],
    }
    (repo / "evals" / "one.evalset.json").write_text(json.dumps({"eval_set_id": "one", "eval_cases": [case]}))
    pull = {"number": 7, "head": {"sha": HEAD, "ref": "f"}, "base": {"sha": BASE, "ref": "main"}, "labels": []}
    event = {"number": 7, "pull_request": pull, "repository": {"full_name": "o/r", "default_branch": "main"}}
    (repo / "event.json").write_text(json.dumps(event))
    return repo


@pytest.fixture
def site(tmp_path: Path) -> Path:
    """The gate's package, copied: what a hostile setup rewrites."""
    site = tmp_path / "site"
    shutil.copytree(
        Path(adk_eval_gate.__file__).parent, site / "adk_eval_gate", ignore=shutil.ignore_patterns("__pycache__")
    )
    return site


def write_config(repo: Path, setup: list[str]) -> None:
    lines = "".join(f"  - {json.dumps(command)}\n" for command in setup)
    (repo / "eval-gate.yml").write_text(
        (f"setup:\n{lines}" if setup else "")
        + "baseline: {store: none}\n"
        + "agents:\n"
        + "  - name: sealagent\n"
        + "    target: {kind: adk, agent: sealagent}\n"
        + "    evalsets: [evals/one.evalset.json]\n"
        + "    criteria: {response_match_score: 0.5}\n"
    )


def run_action(
    repo: Path, site: Path, fake: FakeGitHub, python: str = sys.executable, path: str = ""
) -> tuple[subprocess.CompletedProcess[str], int]:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("GITHUB_", "INPUT_", "ACTIONS_", "GH_")) and "proxy" not in k.lower()
    }
    env.update(
        {
            "PYTHONPATH": os.pathsep.join(filter(None, [str(site), path])),
            "SEAL_SEEN": str(repo / "seen.json"),
            "SEAL_MARKER": str(repo / "marker"),
            **action_env(repo, fake),  # the Actions variables of a pull_request run, as the isolation tests set them
            "INPUT_GITHUB-TOKEN": TOKEN,
        }
    )
    with subprocess.Popen(
        [python, "-P", "-m", "adk_eval_gate.commands.action"],  # the image's ENTRYPOINT
        cwd=repo,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    ) as process:
        stdout, stderr = process.communicate(timeout=600)
    return subprocess.CompletedProcess(process.args, process.returncode, stdout, stderr), process.pid


def test_an_agents_dotenv_proxy_steers_the_agent_alone(repo, site):
    proxy = LoopbackServer(Recorder)
    Recorder.seen = []
    try:
        names = ["HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"]
        dotenv = "".join(f"{name}={proxy.url}\n" for name in names)
        (repo / "sealagent" / ".env").write_text(dotenv + "NO_PROXY=\nno_proxy=\nSEAL_DOTENV=for-the-agent\n")
        write_config(repo, [])
        with FakeGitHub() as fake:
            done, _ = run_action(repo, site, fake)
            requests = list(fake.state.requests)
    finally:
        proxy.close()
    assert done.returncode in (0, 1), done.stderr[-3000:]
    assert Recorder.seen == [], "a GitHub call with the token went through the pull request's proxy"
    assert requests and {r["token"] for r in requests} == {TOKEN}
    comments = [r for r in requests if r["method"] == "POST" and r["path"].endswith("/comments")]
    assert comments  # the report, posted after the agent's `.env` was read, went straight to GitHub too
    seen = json.loads((repo / "seen.json").read_text())
    assert seen["SEAL_DOTENV"] == "for-the-agent" and seen["HTTPS_PROXY"] == proxy.url


def test_a_setup_that_rewrites_the_gate_never_runs_in_our_process(repo, site):
    target = site / LAZY_MODULE
    marker = repo / "marker"
    patch = f"\nimport os; open({str(marker)!r}, 'a').write(str(os.getpid()) + chr(10))\n"
    rewrite = f"{sys.executable} -c " + json.dumps(f"open({str(target)!r}, 'a').write({patch!r})")
    write_config(repo, [rewrite])
    with FakeGitHub() as fake:
        done, pid = run_action(repo, site, fake)
    assert str(pid) not in (marker.read_text().split() if marker.exists() else [])
    assert done.returncode == 2, done.stderr[-3000:]
    errors = [line for line in done.stderr.splitlines() if "changed after the run started" in line]
    assert len(errors) == 1 and str(target) in errors[0], done.stderr[-3000:]
    assert "Traceback" not in done.stderr


def test_a_setup_that_drops_pth_and_sitecustomize_leaves_our_process_alone(repo, site, tmp_path):
    """Into a real site directory (a venv's, processed at every interpreter's start) and onto the path."""
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    python = str(venv / "bin" / "python")
    (site_packages,) = {p for p in site_paths(python) if p.startswith(str(venv))}
    ours = next(p for p in sys.path if p.endswith("site-packages") and Path(p, "google").is_dir())  # google-adk's
    marker = repo / "marker"

    def code(tag: str) -> str:
        return f"import os; open({str(marker)!r}, 'a').write('{tag} ' + str(os.getpid()) + chr(10))\n"

    drops = {str(Path(site_packages) / "zz_seal.pth"): code("pth"), str(site / "sitecustomize.py"): code("site")}
    drop = f"{sys.executable} -c " + json.dumps(
        "".join(f"open({name!r}, 'w').write({text!r}); " for name, text in drops.items())
    )
    write_config(repo, [drop])
    with FakeGitHub() as fake:
        done, pid = run_action(repo, site, fake, python=python, path=ours)
    assert done.returncode in (0, 1), done.stderr[-3000:]
    ran = [line.split() for line in marker.read_text().splitlines()]
    # both act in each fresh interpreter started after them (the agent host: the pull request's), never in ours
    assert {tag for tag, _ in ran} == {"pth", "site"}
    assert str(pid) not in {ran_in for _, ran_in in ran}


def site_paths(python: str) -> list[str]:
    done = subprocess.run(
        [python, "-c", "import site; print(chr(10).join(site.getsitepackages()))"],
        text=True,
        capture_output=True,
        check=True,
        timeout=60,
    )
    return done.stdout.split()


def test_a_benign_setup_still_installs_beside_the_gate(repo, site, tmp_path):
    wheel = tmp_path / "sealbenign-1.0-py3-none-any.whl"
    dist = "sealbenign-1.0.dist-info"
    with zipfile.ZipFile(wheel, "w") as archive:  # a small local package, as built
        archive.writestr("sealbenign/__init__.py", "VALUE = 'installed'\n")
        archive.writestr(f"{dist}/METADATA", "Metadata-Version: 2.1\nName: sealbenign\nVersion: 1.0\n")
        archive.writestr(
            f"{dist}/WHEEL", "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
        )
        archive.writestr(
            f"{dist}/RECORD",
            "".join(
                f"{n},,\n"
                for n in ["sealbenign/__init__.py", *(f"{dist}/{f}" for f in ("METADATA", "WHEEL", "RECORD"))]
            ),
        )
    install = f"{sys.executable} -m pip install --quiet --no-index --no-deps --target {site} {wheel}"
    write_config(repo, [install])
    with FakeGitHub() as fake:
        done, _ = run_action(repo, site, fake)
    assert done.returncode in (0, 1), done.stderr[-3000:]
    assert "changed after the run started" not in done.stderr
    assert json.loads((repo / "seen.json").read_text())["benign"] == "installed"
