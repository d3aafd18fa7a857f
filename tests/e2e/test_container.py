"""The Action's image, really built and run with podman (no Docker engine here) as GitHub runs a Docker action:
as the image's default user (root), the checkout mounted at /github/workspace and owned by the runner's uid.
A debootstrap stand-in for the slim Python base goes in through build arguments.

Without podman, runc or debootstrap (a contributor's machine) the tests skip with the reason; CI installs them
(`make container-tools`) and sets ADK_EVAL_GATE_CONTAINER_TESTS=required, so there a missing tool fails."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import shutil
import subprocess
import time
import zipfile
from pathlib import Path

import pytest

import adk_eval_gate
from adk_eval_gate.baseline.stores import build_store
from adk_eval_gate.config.loader import load_workflow
from adk_eval_gate.github.client import GitHubClient, Patience
from adk_eval_gate.github.context import ActionsContext
from adk_eval_gate.run.pipeline import run_plan
from adk_eval_gate.run.plan import build_plan
from tests.support.fake_github import FakeGitHub
from tests.support.paths import ROOT

STANDIN, BASE, IMAGE = (
    "localhost/adk-eval-gate-py-standin:bookworm",
    "localhost/adk-eval-gate-base:test",
    "localhost/adk-eval-gate:test",
)
CA_BUNDLE = "/etc/ssl/certs/ca-certificates.crt"
RUNNER_UID = 1001  # GitHub-hosted runners check out as uid 1001; the container runs as root


def podman(*args: str, check: bool = True, timeout: int = 900, **kwargs) -> subprocess.CompletedProcess:
    done = subprocess.run(["podman", *args], capture_output=True, text=True, timeout=timeout, **kwargs)
    if check and done.returncode != 0:
        raise AssertionError(f"podman {args[0]} failed: {done.stderr[-3000:]}")
    return done


def _unavailable(reason: str) -> None:
    if os.environ.get("ADK_EVAL_GATE_CONTAINER_TESTS") == "required":
        pytest.fail(f"{reason} (ADK_EVAL_GATE_CONTAINER_TESTS=required)")
    pytest.skip(
        f"{reason}: the container tests need it (`sudo make container-tools` installs podman, runc, debootstrap)"
    )


@pytest.fixture(scope="module")
def image(tmp_path_factory):
    for tool in ("podman", "runc"):
        if not shutil.which(tool):
            _unavailable(f"{tool} is not installed")
    conf = tmp_path_factory.mktemp("podman") / "containers.conf"
    # No CAP_SYS_RESOURCE here and a hybrid cgroup setup: runc with lowered ulimits is what works (environment notes
    # §5).
    conf.write_text(
        '[containers]\ndefault_ulimits = ["nofile=1024:1024", "nproc=1024:1024"]\n[engine]\nruntime = "runc"\n'
    )
    os.environ["CONTAINERS_CONF"] = str(conf)
    if podman("image", "exists", STANDIN, check=False).returncode != 0:
        if os.geteuid() != 0:
            _unavailable("making the stand-in base image (debootstrap) needs root")
        if not shutil.which("debootstrap"):
            _unavailable("debootstrap is not installed (it makes the stand-in base image)")
        rootfs = tmp_path_factory.mktemp("rootfs")
        mirror = next(
            (
                line.split()[1]
                for f in Path("/etc/apt/sources.list.d").glob("*.sources")
                for line in f.read_text().splitlines()
                if line.startswith("URIs:")
            ),
            "http://deb.debian.org/debian",
        )
        subprocess.run(
            [
                "debootstrap",
                "--variant=minbase",
                "--include=python3,python3-venv",
                "bookworm",
                str(rootfs),
                mirror,
            ],
            check=True,
            capture_output=True,
            timeout=900,
        )
        tar = subprocess.Popen(["tar", "-C", str(rootfs), "-c", "."], stdout=subprocess.PIPE)
        subprocess.run(
            ["podman", "import", "-", STANDIN], stdin=tar.stdout, check=True, capture_output=True, timeout=600
        )
        tar.wait()
    podman(
        "build",
        "-q",
        "-f",
        "Dockerfile.base",
        "--build-arg",
        f"PYTHON_IMAGE={STANDIN}",
        "--build-arg",
        "CA_BUNDLE=/host-ca.crt",
        "--volume",
        f"{CA_BUNDLE}:/host-ca.crt:ro",
        "-t",
        BASE,
        ".",
        cwd=ROOT,
    )
    started = time.monotonic()
    podman(
        "build",
        "-q",
        "--network=none",
        "-f",
        "Dockerfile",
        "--build-arg",
        f"BASE_IMAGE={BASE}",
        "-t",
        IMAGE,
        ".",
        cwd=ROOT,
    )
    thin_seconds = time.monotonic() - started
    size = podman("image", "inspect", IMAGE, "--format", "{{.Size}}").stdout.strip()
    print(f"\nimage {IMAGE}: {int(size) / 1e6:.0f} MB; thin layer built offline in {thin_seconds:.1f}s")
    return IMAGE


def as_the_runner_checked_it_out(workspace: Path) -> None:
    """GitHub creates the file-command files and owns the checkout as the runner's user, not the container's root."""
    for name in ("output.txt", "summary.md"):
        (workspace / name).write_text("")
    if os.geteuid() == 0:
        for path in [workspace, *workspace.rglob("*")]:
            os.chown(path, RUNNER_UID, RUNNER_UID, follow_symlinks=False)


def run_container(image: str, workspace: Path, env: dict[str, str]) -> tuple[subprocess.Popen, str, str, float]:
    args = [
        "run",
        "--rm",
        "--network=host",
        "-v",
        f"{workspace}:/github/workspace",
        "-w",
        "/github/workspace",
    ]
    for key, value in env.items():
        args += ["-e", f"{key}={value}"]
    started = time.monotonic()
    process = subprocess.Popen(["podman", *args, image], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    first_line = process.stdout.readline()
    first_output = time.monotonic() - started
    rest, _ = process.communicate(timeout=600)
    print(f"container start to first output: {first_output:.2f}s; whole run {time.monotonic() - started:.2f}s")
    return process, first_line, rest, first_output


def actions_env(fake: FakeGitHub) -> dict[str, str]:
    return {
        "GITHUB_ACTIONS": "true",
        "GITHUB_WORKSPACE": "/github/workspace",
        "GITHUB_API_URL": fake.url,
        "GITHUB_REPOSITORY": "o/r",
        "GITHUB_EVENT_NAME": "pull_request",
        "GITHUB_EVENT_PATH": "/github/workspace/event.json",
        "GITHUB_SHA": "c" * 40,
        "GITHUB_RUN_ID": "42",
        "GITHUB_OUTPUT": "/github/workspace/output.txt",
        "GITHUB_STEP_SUMMARY": "/github/workspace/summary.md",
        "INPUT_CONFIG": "eval-gate.yml",
        "INPUT_GITHUB-TOKEN": "ghs_containerToken",
    }


def test_the_image_runs_as_root_with_git_and_a_safe_workspace(image):
    assert podman("image", "inspect", image, "--format", "{{.Config.User}}").stdout.strip() in (
        "",
        "root",
        "0",
    )
    done = podman(
        "run",
        "--rm",
        "--entrypoint",
        "sh",
        image,
        "-c",
        "id -u && git --version && git config --system --get-all safe.directory && adk-eval-gate --version",
    )
    uid, git_version, safe, version = done.stdout.splitlines()
    assert uid == "0" and git_version.startswith("git version 2.") and safe == "*"
    assert version == f"adk-eval-gate {adk_eval_gate.__version__}"


def test_the_image_runs_the_example_as_a_runner_would(image, example, tmp_path):
    with FakeGitHub() as fake:
        (example / "event.json").write_text(
            json.dumps(
                {
                    "number": 7,
                    "pull_request": {
                        "number": 7,
                        "head": {"sha": "c" * 40},
                        "base": {"sha": "b" * 40, "ref": "main"},
                        "labels": [],
                    },
                    "repository": {"full_name": "o/r", "default_branch": "main"},
                }
            )
        )
        # A pull request's files named like the modules the action imports: never imported by the action itself.
        for name in ("yaml", "pydantic", "requests"):
            (example / f"{name}.py").write_text(
                "import pathlib\npathlib.Path(__file__).with_name('shadowed').write_text(__name__)\nraise ImportError\n"
            )
        as_the_runner_checked_it_out(example)
        process, first_line, rest, _ = run_container(image, example, actions_env(fake))
        assert process.returncode == 0, first_line + rest
        assert not (example / "shadowed").exists()
        assert first_line.startswith("[adk-eval-gate]")
        # the example's two failing cases do not gate (fail_on: regression, error): notices on their lines, no error
        assert "::notice file=evals/dice.evalset.json,line=" in rest and "(not gating)" in rest
        assert "::error" not in rest
        assert "adk-eval-gate: PASS" in rest  # the verdict line closes the log
        assert "passed<<" in (example / "output.txt").read_text()
        assert "adk-eval-gate passed" in (example / "summary.md").read_text()
        (comment,) = fake.state.comments[7]
        assert "adk-eval-gate passed" in comment["body"] and fake.state.schema_errors == []
        assert "ghs_containerToken" not in first_line + rest


def local_wheel(folder: Path, name: str, version: str, module_source: str) -> Path:
    """A pure-Python wheel written by hand: the container has no network, so the package comes from a folder."""
    dist_info = f"{name}-{version}.dist-info"
    files = {
        f"{name}/__init__.py": module_source.encode(),
        f"{dist_info}/METADATA": (
            f"Metadata-Version: 2.1\nName: {name.replace('_', '-')}\nVersion: {version}\n"
        ).encode(),
        f"{dist_info}/WHEEL": (
            b"Wheel-Version: 1.0\nGenerator: adk-eval-gate tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
        ),
    }

    def record_line(path: str, data: bytes) -> str:
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        return f"{path},sha256={digest},{len(data)}"

    record = "\n".join([*(record_line(p, d) for p, d in files.items()), f"{dist_info}/RECORD,,"]) + "\n"
    folder.mkdir(parents=True, exist_ok=True)
    wheel = folder / f"{name}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        for path, data in {**files, f"{dist_info}/RECORD": record.encode()}.items():
            archive.writestr(path, data)
    return wheel


def git(workspace: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-c", "user.name=dev", "-c", "user.email=dev@example.com", *args],
        cwd=workspace,
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    return done.stdout.strip()


def test_setup_installs_the_agents_requirements_and_git_finds_the_merge_base(image, example):
    """An agent needing a package the image lacks: `setup:` installs it into the image's venv (as root; the old
    USER 1001 could not write there). The pull request's merge-base comes from git inside the container: the
    baseline exists only for the commit the feature branch forked from, not for the base branch's tip.
    GOOGLE_APPLICATION_CREDENTIALS, exported for the runner's path, names the workspace's file inside."""
    with FakeGitHub() as fake:
        config = example / "eval-gate.yml"
        kept = [line for line in config.read_text().splitlines(keepends=True) if not line.startswith("baseline:")]
        config.write_text("baseline: {store: branch}\n" + "".join(kept))

        git(example, "init", "-q", "-b", "main")
        git(example, "add", "-A")
        git(example, "commit", "-q", "-m", "the agent")
        fork_point = git(example, "rev-parse", "HEAD")
        results = run_plan(build_plan(config), quiet=True)
        results.git.sha = fork_point
        store = build_store(
            load_workflow(config),
            ActionsContext(api_url=fake.url, repository="o/r", token="t", sha=fork_point),
        )
        store.client = GitHubClient(fake.url, "t", patience=Patience(backoff=0.001))
        store.save(results)

        git(example, "checkout", "-q", "-b", "feature")
        (example / "hello_world" / "__init__.py").write_text(
            "import dice_words  # noqa: F401  (the agent's own dependency, from requirements.txt)\n\nfrom . import "
            "agent  # noqa: F401\n"
        )
        (example / "requirements.txt").write_text("dice-words==1.0\n")
        local_wheel(example / "wheels", "dice_words", "1.0", "NAMES = {1: 'one', 6: 'six'}\n")
        config.write_text(
            "setup: ['pip install --no-index --find-links wheels -r requirements.txt',"
            " 'cp \"$GOOGLE_APPLICATION_CREDENTIALS\" seen-credentials.json']\n" + config.read_text()
        )
        git(example, "add", "-A")
        git(example, "commit", "-q", "-m", "the agent needs dice-words")
        head = git(example, "rev-parse", "HEAD")
        git(example, "checkout", "-q", "main")
        (example / "NOTES.md").write_text("main moved on after the fork\n")
        git(example, "add", "NOTES.md")
        git(example, "commit", "-q", "-m", "main moves on")
        base_tip = git(example, "rev-parse", "HEAD")
        git(example, "checkout", "-q", "feature")

        (example / "event.json").write_text(
            json.dumps(
                {
                    "number": 8,
                    "pull_request": {
                        "number": 8,
                        "head": {"sha": head, "ref": "feature"},
                        "base": {"sha": base_tip, "ref": "main"},
                        "labels": [],
                    },
                    "repository": {"full_name": "o/r", "default_branch": "main"},
                }
            )
        )
        # What google-github-actions/auth leaves: a credentials file in the workspace, exported as the runner's path.
        (example / "gha-creds-1.json").write_text('{"type": "external_account"}')
        runner_env = {
            "RUNNER_WORKSPACE": "/home/runner/work/r",
            "GOOGLE_APPLICATION_CREDENTIALS": "/home/runner/work/r/r/gha-creds-1.json",
        }
        as_the_runner_checked_it_out(example)
        process, first_line, rest, _ = run_container(
            image, example, {**actions_env(fake), **runner_env, "GITHUB_SHA": head}
        )
        log = first_line + rest
        assert process.returncode == 0, log[-4000:]
        assert "::group::setup: pip install --no-index --find-links wheels -r requirements.txt" in log
        assert "Successfully installed dice-words-1.0" in log
        assert json.loads((example / "seen-credentials.json").read_text()) == {"type": "external_account"}
        assert "is /github/workspace/gha-creds-1.json inside the action's container" in log

        written = json.loads((example / "adk-eval-gate-out" / "results.json").read_text())
        statuses = [case["status"] for eval_set in written["eval_sets"] for case in eval_set["cases"]]
        assert statuses and "error" not in statuses, statuses  # the agent imported dice_words
        comparison = json.loads((example / "adk-eval-gate-out" / "comparison.json").read_text())
        assert comparison["baseline"]["sha"] == fork_point and comparison["baseline"]["exact_base"] is True
        assert fork_point[:12] in comparison["baseline"]["source"]
        assert not any("merge-base" in warning for warning in comparison.get("warnings", []))
        assert "dubious ownership" not in log
