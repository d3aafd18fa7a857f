"""The Docker Action's entrypoint: maps the `INPUT_*` environment GitHub gives a container action to `ci`.

GitHub keeps hyphens in input names (`github-token` → `INPUT_GITHUB-TOKEN`); both spellings are read. Inputs the
command line does not check itself (booleans, the token, the working directory) are checked here, by the same
one-line rule, before anything runs.
"""

from __future__ import annotations

import os
import sys
from pathlib import PurePosixPath

from adk_eval_gate.commands.main import main as cli_main
from adk_eval_gate.core.errors import EXIT_BAD_INPUT, InputError
from adk_eval_gate.core.held_tokens import held_token, hold, holding
from adk_eval_gate.github import workflow_commands
from adk_eval_gate.github.variables import boolean_input, check_token

# Paths an earlier step exported for the runner (google-github-actions/auth writes its credentials file into the
# workspace and exports these); inside the container only the workspace is mounted, at another path.
RUNNER_PATH_VARIABLES = (
    "GOOGLE_APPLICATION_CREDENTIALS",
    "GOOGLE_GHA_CREDS_PATH",
    "CLOUDSDK_AUTH_CREDENTIAL_FILE_OVERRIDE",
)


def _input(name: str, default: str = "") -> str:
    for key in (f"INPUT_{name.upper()}", f"INPUT_{name.upper().replace('-', '_')}"):
        value = os.environ.get(key)
        if value is not None and value.strip() != "":
            return value.strip()
    return default


def container_path(path: str, environ: dict[str, str] | os._Environ[str]) -> str | None:
    """The container's path for a runner path under the workspace, or None when `path` is not one.

    GitHub mounts the runner's `$RUNNER_WORKSPACE/<repository name>` at the container's `$GITHUB_WORKSPACE`
    (`/github/workspace`) and passes RUNNER_WORKSPACE through unchanged, so the runner path is known without
    guessing the runner's home."""
    runner_workspace, workspace = environ.get("RUNNER_WORKSPACE", ""), environ.get("GITHUB_WORKSPACE", "")
    if not runner_workspace or not workspace or not PurePosixPath(path).is_absolute():
        return None
    try:
        relative = PurePosixPath(path).relative_to(runner_workspace)
    except ValueError:
        return None
    # The first component is the checkout folder the runner mounted (the repository's name).
    if len(relative.parts) < 2:
        return None
    return str(PurePosixPath(workspace, *relative.parts[1:]))


def map_runner_paths(environ: dict[str, str] | os._Environ[str]) -> list[str]:
    """Points the runner-path variables at the same files inside the container; returns one notice per change,
    or a warning for a path that is neither in the container nor under the workspace."""
    messages = []
    for name in RUNNER_PATH_VARIABLES:
        path = environ.get(name, "")
        if not path or os.path.exists(path):
            continue
        mapped = container_path(path, environ)
        if mapped is not None and os.path.exists(mapped):
            environ[name] = mapped
            messages.append(f"::notice::{name}: the runner path {path} is {mapped} inside the action's container")
        else:
            messages.append(
                f"::warning::{name}: {path} does not exist inside the action's container (only the "
                "workspace is mounted); write the file under the workspace, e.g. "
                "google-github-actions/auth's default create_credentials_file"
            )
    return messages


def _checked_argv() -> list[str]:
    """The command line `ci` (or `status`) gets from the Action's inputs, every input checked first."""
    # Held, never in the environment (core/held_tokens.py): the entry took it out before anything started.
    token = (held_token("INPUT_GITHUB-TOKEN", "INPUT_GITHUB_TOKEN") or "").strip()
    if token:
        check_token("github-token", token)
        if held_token("GITHUB_TOKEN") is None:
            hold({"GITHUB_TOKEN": token})
    if _input("status"):
        # an `if: cancelled()` / `if: failure()` step: mark the live status, run nothing
        argv = ["status", "--state", _input("status"), "--config", _input("config", "eval-gate.yml")]
        argv += [
            arg for name in ("comment-key", "comment-author") if _input(name) for arg in (f"--{name}", _input(name))
        ]
    else:
        # The Action's container is where `setup:` belongs (it installs the agent's dependencies into the image).
        argv = ["ci", "--setup", "--config", _input("config", "eval-gate.yml")]
        argv += ["--output-dir", _input("output-dir", "adk-eval-gate-out")]
        if not boolean_input("post-comment", _input("post-comment", "true")):
            argv.append("--no-comment")
        for name in ("comment-key", "comment-mode", "comment-when", "comment-author"):
            if _input(name):
                argv += [f"--{name}", _input(name)]
        for label in filter(None, (part.strip() for part in _input("labels").split(","))):
            argv += ["--label", label]
    working_directory = _input("working-directory")
    if working_directory:
        try:
            os.chdir(working_directory)
        except (OSError, ValueError) as exc:
            raise InputError(
                None,
                "working-directory",
                f"{working_directory!r}: {getattr(exc, 'strerror', None) or exc}",
                "give an existing directory of the repository",
            ) from None
    return argv


def main(own_process: bool = False) -> int:
    """`own_process`: the container's entry, whose process ends with the command (see commands.main.main)."""
    with holding():  # called in process (tests); the container's entry has already taken them (below)
        for message in map_runner_paths(os.environ):
            print(message, file=sys.stderr)
        try:
            argv = _checked_argv()
        except InputError as error:
            workflow_commands.input_error(error)
            return EXIT_BAD_INPUT
        return cli_main(argv, own_process=own_process)


if __name__ == "__main__":
    from adk_eval_gate.commands.main import isolate_console_process

    isolate_console_process()  # INPUT_GITHUB-TOKEN, ACTIONS_RUNTIME_TOKEN, ...: before anything starts
    sys.exit(main(own_process=True))
