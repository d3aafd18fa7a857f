"""How the product names a file to people: relative to the repository root (annotations, JUnit, the comment) or
to the config's directory (errors about what the config points at), never an absolute path of this machine."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path


def repository_root(start: Path | None = None, workspace: str | None = None) -> Path:
    """The Actions workspace (GITHUB_WORKSPACE, read once by the Actions context), else the git top level of
    `start`, else the working directory."""
    if workspace:
        return Path(workspace).resolve()
    try:
        done = subprocess.run(
            ["git", "rev-parse", "--show-toplevel"], cwd=start or Path.cwd(), capture_output=True, text=True, timeout=20
        )
        if done.returncode == 0 and done.stdout.strip():
            return Path(done.stdout.strip()).resolve()
    except (OSError, subprocess.SubprocessError):
        pass
    return Path.cwd().resolve()


def relative_to_root(path: Path, root: Path) -> str | None:
    """`path` as a repository-relative POSIX path (what annotations and JUnit need), None when outside `root`."""
    try:
        return path.resolve().relative_to(root).as_posix()
    except ValueError:
        return None


def shown_path(path: Path, base: Path) -> str:
    """How errors and reports name a file the config points at: relative to the config's directory."""
    try:
        return os.path.relpath(path, base)
    except ValueError:  # another drive
        return str(path)


def relative_posix(base: Path, path: Path) -> str:
    """How results and reports name a file: POSIX, relative to the config's directory, so they match across
    machines (an absolute path only for a file outside it)."""
    try:
        return path.resolve().relative_to(base).as_posix()
    except ValueError:
        return path.as_posix()


def file_from_root(base_dir: Path, file: str, root: Path | None) -> str:
    """A results file's eval-set path (relative to the config) as the repository names it; as given when it lies
    outside the repository."""
    return (relative_to_root(base_dir / file, root) if root else None) or file
