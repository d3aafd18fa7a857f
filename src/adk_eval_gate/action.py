"""The Docker Action's entrypoint: maps the `INPUT_*` environment GitHub gives a container action to `ci`.

GitHub keeps hyphens in input names (`github-token` → `INPUT_GITHUB-TOKEN`); both spellings are read.
"""

from __future__ import annotations

import os
import sys

from .cli import main as cli_main
from .errors import EXIT_BAD_INPUT, InputError


def _input(name: str, default: str = "") -> str:
    for key in (f"INPUT_{name.upper()}", f"INPUT_{name.upper().replace('-', '_')}"):
        value = os.environ.get(key)
        if value is not None and value.strip() != "":
            return value.strip()
    return default


def main() -> int:
    token = _input("github-token")
    if token:
        os.environ.setdefault("GITHUB_TOKEN", token)
    argv = ["ci", "--config", _input("config", "eval-gate.yml"), "--output-dir", _input("output-dir", "adk-eval-gate-out")]
    if _input("post-comment", "true").lower() in ("false", "0", "no"):
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
            error = InputError(None, "working-directory", f"{working_directory!r}: {getattr(exc, 'strerror', None) or exc}",
                               "give an existing directory of the repository")
            print(f"error: {error.render()}", file=sys.stderr)
            return EXIT_BAD_INPUT
    return cli_main(argv)


if __name__ == "__main__":
    sys.exit(main())
