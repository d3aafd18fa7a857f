"""Runner paths exported by earlier steps (an auth step's credentials file) reach the action's container as the
same file under the container's workspace, as GitHub mounts it."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from adk_eval_gate.commands.action import container_path, map_runner_paths

RUNNER_WORKSPACE = "/home/runner/work/agents"
RUNNER_CREDS = f"{RUNNER_WORKSPACE}/agents/gha-creds-1a2b.json"


def test_a_runner_path_under_the_workspace_is_the_same_file_under_the_containers_workspace():
    env = {"RUNNER_WORKSPACE": RUNNER_WORKSPACE, "GITHUB_WORKSPACE": "/github/workspace"}
    assert container_path(RUNNER_CREDS, env) == "/github/workspace/gha-creds-1a2b.json"
    assert container_path(f"{RUNNER_WORKSPACE}/agents/sub/dir/key.json", env) == "/github/workspace/sub/dir/key.json"
    # Not under the mounted checkout: the runner's temp folder, another job's folder, a look-alike prefix.
    assert container_path("/home/runner/work/_temp/creds.json", env) is None
    assert container_path(f"{RUNNER_WORKSPACE}/creds.json", env) is None
    assert container_path("/home/runner/work/agents-other/agents/creds.json", env) is None
    assert container_path("relative/creds.json", env) is None
    assert container_path(RUNNER_CREDS, {"GITHUB_WORKSPACE": "/github/workspace"}) is None


def test_the_variables_are_remapped_only_when_the_container_has_the_file(tmp_path):
    (tmp_path / "gha-creds-1a2b.json").write_text("{}")
    existing = tmp_path / "mounted-elsewhere.json"
    existing.write_text("{}")
    env = {
        "RUNNER_WORKSPACE": RUNNER_WORKSPACE,
        "GITHUB_WORKSPACE": str(tmp_path),
        "GOOGLE_APPLICATION_CREDENTIALS": RUNNER_CREDS,
        "GOOGLE_GHA_CREDS_PATH": RUNNER_CREDS,
        "CLOUDSDK_AUTH_CREDENTIAL_FILE_OVERRIDE": str(existing),
    }
    messages = map_runner_paths(env)
    assert (
        env["GOOGLE_APPLICATION_CREDENTIALS"] == env["GOOGLE_GHA_CREDS_PATH"] == str(tmp_path / "gha-creds-1a2b.json")
    )
    assert env["CLOUDSDK_AUTH_CREDENTIAL_FILE_OVERRIDE"] == str(existing)
    assert len(messages) == 2 and all(m.startswith("::notice::") for m in messages)

    outside = {
        "RUNNER_WORKSPACE": RUNNER_WORKSPACE,
        "GITHUB_WORKSPACE": str(tmp_path),
        "GOOGLE_APPLICATION_CREDENTIALS": "/home/runner/work/_temp/creds.json",
    }
    (warning,) = map_runner_paths(outside)
    assert outside["GOOGLE_APPLICATION_CREDENTIALS"] == "/home/runner/work/_temp/creds.json"
    assert warning.startswith(
        "::warning::GOOGLE_APPLICATION_CREDENTIALS: /home/runner/work/_temp/creds.json does not exist"
    )
    assert map_runner_paths({"GITHUB_WORKSPACE": str(tmp_path)}) == []


def test_the_entrypoint_hands_the_mapped_path_to_setup_and_the_agents(example):
    """What an auth step exported reaches the config's `setup:` commands (and the agents) as the container path."""
    (example / "gha-creds-1a2b.json").write_text(json.dumps({"type": "external_account"}))
    config = example / "eval-gate.yml"
    config.write_text("setup: ['cp \"$GOOGLE_APPLICATION_CREDENTIALS\" seen-by-setup.json']\n" + config.read_text())
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "INPUT_", "RUNNER_", "GOOGLE_"))}
    env.update(
        {
            "GITHUB_WORKSPACE": str(example),
            "RUNNER_WORKSPACE": RUNNER_WORKSPACE,
            "GOOGLE_APPLICATION_CREDENTIALS": RUNNER_CREDS,
            "INPUT_CONFIG": "eval-gate.yml",
            "INPUT_POST-COMMENT": "false",
            "INPUT_OUTPUT-DIR": str(example / "out"),
        }
    )
    done = subprocess.run(
        [sys.executable, "-m", "adk_eval_gate.commands.action"],
        cwd=example,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode in (0, 1), done.stderr[-3000:]
    assert json.loads((example / "seen-by-setup.json").read_text()) == {"type": "external_account"}
    assert f"the runner path {RUNNER_CREDS} is {example / 'gha-creds-1a2b.json'}" in done.stderr
    assert (example / "out" / "results.json").is_file()
