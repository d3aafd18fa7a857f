"""The Action's image, really built and run with podman (no Docker engine here): a debootstrap stand-in for the
slim Python base goes in through build arguments, then the container runs the example as a runner would."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from .fake_github import FakeGitHub

ROOT = Path(__file__).resolve().parents[1]
STANDIN, BASE, IMAGE = "localhost/adk-eval-gate-py-standin:bookworm", "localhost/adk-eval-gate-base:test", "localhost/adk-eval-gate:test"
CA_BUNDLE = "/etc/ssl/certs/ca-certificates.crt"


def podman(*args: str, check: bool = True, timeout: int = 900, **kwargs) -> subprocess.CompletedProcess:
    done = subprocess.run(["podman", *args], capture_output=True, text=True, timeout=timeout, **kwargs)
    if check and done.returncode != 0:
        raise AssertionError(f"podman {args[0]} failed: {done.stderr[-3000:]}")
    return done


@pytest.fixture(scope="module")
def image(tmp_path_factory):
    for tool in ("podman", "runc", "debootstrap"):
        assert shutil.which(tool), f"{tool} is missing: `make test` installs podman, runc and debootstrap"
    conf = tmp_path_factory.mktemp("podman") / "containers.conf"
    # No CAP_SYS_RESOURCE here and a hybrid cgroup setup: runc with lowered ulimits is what works (environment notes §5).
    conf.write_text('[containers]\ndefault_ulimits = ["nofile=1024:1024", "nproc=1024:1024"]\n[engine]\nruntime = "runc"\n')
    os.environ["CONTAINERS_CONF"] = str(conf)
    if podman("image", "exists", STANDIN, check=False).returncode != 0:
        rootfs = tmp_path_factory.mktemp("rootfs")
        mirror = next((line.split()[1] for f in Path("/etc/apt/sources.list.d").glob("*.sources")
                       for line in f.read_text().splitlines() if line.startswith("URIs:")), "http://deb.debian.org/debian")
        subprocess.run(["debootstrap", "--variant=minbase", "--include=python3,python3-venv", "bookworm", str(rootfs), mirror],
                       check=True, capture_output=True, timeout=900)
        tar = subprocess.Popen(["tar", "-C", str(rootfs), "-c", "."], stdout=subprocess.PIPE)
        subprocess.run(["podman", "import", "-", STANDIN], stdin=tar.stdout, check=True, capture_output=True, timeout=600)
        tar.wait()
    podman("build", "-q", "-f", "Dockerfile.base", "--build-arg", f"PYTHON_IMAGE={STANDIN}", "--build-arg", "CA_BUNDLE=/host-ca.crt",
           "--volume", f"{CA_BUNDLE}:/host-ca.crt:ro", "-t", BASE, ".", cwd=ROOT)
    started = time.monotonic()
    podman("build", "-q", "--network=none", "-f", "Dockerfile", "--build-arg", f"BASE_IMAGE={BASE}", "-t", IMAGE, ".", cwd=ROOT)
    thin_seconds = time.monotonic() - started
    size = podman("image", "inspect", IMAGE, "--format", "{{.Size}}").stdout.strip()
    print(f"\nimage {IMAGE}: {int(size) / 1e6:.0f} MB; thin layer built offline in {thin_seconds:.1f}s")
    return IMAGE


def test_the_image_runs_the_example_as_a_runner_would(image, example, tmp_path):
    with FakeGitHub() as fake:
        event = example / "event.json"
        event.write_text(json.dumps({"number": 7, "pull_request": {"number": 7, "head": {"sha": "c" * 40},
                                                                  "base": {"sha": "b" * 40, "ref": "main"}, "labels": []},
                                     "repository": {"full_name": "o/r", "default_branch": "main"}}))
        for name in ("output.txt", "summary.md"):
            (example / name).write_text("")
        os.chmod(example, 0o777)
        for path in example.rglob("*"):
            os.chmod(path, 0o777 if path.is_dir() else 0o666)
        env = {"GITHUB_ACTIONS": "true", "GITHUB_WORKSPACE": "/github/workspace", "GITHUB_API_URL": fake.url,
               "GITHUB_REPOSITORY": "o/r", "GITHUB_EVENT_NAME": "pull_request", "GITHUB_EVENT_PATH": "/github/workspace/event.json",
               "GITHUB_SHA": "c" * 40, "GITHUB_RUN_ID": "42", "GITHUB_OUTPUT": "/github/workspace/output.txt",
               "GITHUB_STEP_SUMMARY": "/github/workspace/summary.md", "INPUT_CONFIG": "eval-gate.yml",
               "INPUT_GITHUB-TOKEN": "ghs_containerToken"}
        args = ["run", "--rm", "--network=host", "-v", f"{example}:/github/workspace", "-w", "/github/workspace"]
        for key, value in env.items():
            args += ["-e", f"{key}={value}"]
        started = time.monotonic()
        process = subprocess.Popen(["podman", *args, image], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        first_line = process.stdout.readline()
        first_output = time.monotonic() - started
        rest, _ = process.communicate(timeout=300)
        print(f"container start to first output: {first_output:.2f}s; whole run {time.monotonic() - started:.2f}s")
        assert process.returncode == 0, first_line + rest
        assert first_line.startswith("[adk-eval-gate]")
        assert "::error file=evals/dice.evalset.json,line=" in rest
        assert "passed<<" in (example / "output.txt").read_text()
        assert "adk-eval-gate passed" in (example / "summary.md").read_text()
        (comment,) = fake.state.comments[7]
        assert "adk-eval-gate passed" in comment["body"] and fake.state.schema_errors == []
        assert "ghs_containerToken" not in first_line + rest
