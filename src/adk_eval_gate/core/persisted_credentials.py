"""The token actions/checkout leaves in the checkout (`persist-credentials`, true by default): any process of the
job can read it from the repository's git config, so the pull request's code would hold the workflow's token.

actions/checkout up to v5 writes `http.https://github.com/.extraheader` (`AUTHORIZATION: basic …`) into
`.git/config`; v6 writes it into a file under RUNNER_TEMP that `.git/config` includes (`includeIf.gitdir:…`).
Both are found here; only the setting's name is ever shown, never its value.
"""

from __future__ import annotations

import re
from pathlib import Path

from adk_eval_gate.core.errors import InputError

_SECTION = re.compile(r"^\s*\[\s*([A-Za-z0-9.-]+)(?:\s+\"((?:[^\"\\]|\\.)*)\")?\s*\]")
_KEY = re.compile(r"^\s*([A-Za-z][A-Za-z0-9-]*)\s*(?:=\s*(.*?))?\s*$")
_INCLUDES = 5  # git's own include depth is 10; a checkout's config includes one file


def persisted_credential(checkout: Path) -> str | None:
    """The name of the git setting holding a persisted credential in the checkout at `checkout`, or None."""
    git = checkout / ".git"
    if git.is_file():  # a worktree or submodule: `gitdir: <path>`
        text = _read(git) or ""
        git = Path(text.partition("gitdir:")[2].strip() or git)
        git = git if git.is_absolute() else checkout / git
    return _in_config(git / "config", git, _INCLUDES)


def refuse_persisted_credential(checkout: Path) -> None:
    """Fail closed: the pull request's code must not run beside a readable token."""
    setting = persisted_credential(checkout)
    if setting is not None:
        raise InputError(
            ".git/config",
            setting,
            "holds the token actions/checkout persisted, which the pull request's code could read",
            "set `persist-credentials: false` on the actions/checkout step",
        )


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None


def _in_config(path: Path, git_dir: Path, depth: int) -> str | None:
    text = _read(path)
    if text is None or depth == 0:
        return None
    section = subsection = ""
    for line in text.splitlines():
        line = line.split(";")[0] if '"' not in line else line
        if line.lstrip().startswith("#"):
            continue
        if header := _SECTION.match(line):
            section, subsection = header.group(1).lower(), header.group(2) or ""
            line = line[header.end() :]
        key = _KEY.match(line)
        if not key:
            continue
        name, value = key.group(1).lower(), (key.group(2) or "").strip().strip('"')
        if section == "http" and name == "extraheader" and value:
            return f"http.{subsection + '.' if subsection else ''}extraheader"
        if section == "core" and name == "sshcommand" and value:  # checkout's `ssh-key`, persisted the same way
            return "core.sshCommand"
        if section in ("include", "includeif") and name == "path" and value:
            included = Path(value).expanduser()
            found = _in_config(included if included.is_absolute() else git_dir / included, git_dir, depth - 1)
            if found is not None:
                return found
    return None
