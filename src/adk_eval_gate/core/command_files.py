"""The runner's command files are ours alone: what the pull request's code writes to them is undone, and fails the run.

GitHub's runner reads `$GITHUB_ENV`, `$GITHUB_PATH`, `$GITHUB_OUTPUT`, `$GITHUB_STEP_SUMMARY` and `$GITHUB_STATE`
after our step and applies them to the steps after it: a `PYTHONPATH`, `BASH_ENV` or `LD_PRELOAD` the pull
request's code wrote to `$GITHUB_ENV` would run its code in a later step that holds the token. The variables never
reach its processes (core/redaction.py `child_env`), but a process of the same user can still write the files by
path (the runner's file-commands folder is easily found). So `Fence` keeps each file's content before the first
pull-request process starts and, once every one has ended (core/descendants.py ends those left behind), puts back
any file that changed and raises `CommandFileWritten`.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import stat
import sys
from dataclasses import dataclass, field
from pathlib import Path

from adk_eval_gate.core.descendants import (
    DescendantsEscaped,
    Process,
    become_subreaper,
    descendants,
    end_new_descendants,
)
from adk_eval_gate.core.descendants import restore_subreaper as _restore_subreaper
from adk_eval_gate.core.errors import CommandFileWritten
from adk_eval_gate.core.held_tokens import held
from adk_eval_gate.core.redaction import COMMAND_FILE_VARIABLES

# The runner keeps every step's command files in one folder (`_runner_file_commands`; a container action sees it
# mounted as /github/file_commands): its other files are kept too.
_FOLDER_NAMES = ("_runner_file_commands", "file_commands")
MAX_KEPT_BYTES = 16 * 1024 * 1024  # GitHub reads at most 1 MiB of a summary; a larger file is kept by its hash
MAX_FOLDER_FILES = 256
SHOWN_ENDED = 20  # processes named one by one in the log; the rest counted


@dataclass(frozen=True)
class Kept:
    """A file as it was: absent (`content` None, `digest` None), or its bytes (or, over the cap, their hash)."""

    path: Path
    variable: str
    identity: tuple[int, int] | None = None  # (device, inode): a file replaced by another (a symlink) differs
    content: bytes | None = None
    digest: str | None = None


def runs_pull_request_code_elsewhere(environ: dict[str, str] | os._Environ[str] | None = None) -> bool:
    """Whether the pull request's code (`workers: 1` agents, custom metric functions) must run in a process of its
    own: when this one holds a token it could find among our objects, or the runner's command files, which a
    thread it left in our process could write after the fence's check."""
    environ = os.environ if environ is None else environ
    return bool(held()) or any(environ.get(variable) for variable in COMMAND_FILE_VARIABLES)


def _keep(path: Path, variable: str) -> Kept:
    try:
        info = path.lstat()
        if not stat.S_ISREG(info.st_mode):
            return Kept(path, variable, (info.st_dev, info.st_ino), None, f"not a file: {info.st_mode:o}")
        with path.open("rb") as file:
            content = file.read(MAX_KEPT_BYTES + 1)
            digest = hashlib.sha256(content)
            while chunk := file.read(1 << 20):
                digest.update(chunk)
    except FileNotFoundError:
        return Kept(path, variable)
    except OSError as exc:
        return Kept(path, variable, None, None, f"unreadable: {exc.errno}")
    kept = content if len(content) <= MAX_KEPT_BYTES else None
    return Kept(path, variable, (info.st_dev, info.st_ino), kept, digest.hexdigest())


def command_files(environ: dict[str, str] | os._Environ[str]) -> list[tuple[Path, str]]:
    """Each command file the environment names, and the other files of the runner's file-commands folder."""
    named = [(Path(environ[v]).absolute(), v) for v in COMMAND_FILE_VARIABLES if environ.get(v)]
    files = dict(named)
    for folder in {path.parent for path, _ in named if path.parent.name in _FOLDER_NAMES}:
        with contextlib.suppress(OSError):
            for entry in sorted(folder.iterdir())[:MAX_FOLDER_FILES]:
                files.setdefault(entry, f"{folder.name}/{entry.name}")
    return sorted(files.items())


def _put_back(kept: Kept) -> None:
    """The file as it was; over the cap (its bytes not kept) it is emptied, which the runner reads as nothing."""
    path = kept.path
    with contextlib.suppress(FileNotFoundError):
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)
        else:
            path.unlink()
    if kept.digest is None:  # it did not exist
        return
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    descriptor = os.open(path, flags, 0o644)
    with os.fdopen(descriptor, "wb") as file:
        file.write(kept.content or b"")


@dataclass
class Fence:
    """Opened before the first of the pull request's processes starts; `close` after the last one ended."""

    kept: list[Kept]
    known: dict[int, Process]
    subreaper: int | None
    closed: bool = field(default=False)

    @classmethod
    def open(cls, environ: dict[str, str] | os._Environ[str] | None = None) -> Fence:
        environ = os.environ if environ is None else environ
        kept = [_keep(path, variable) for path, variable in command_files(environ)]
        subreaper = become_subreaper()
        return cls(kept, descendants(), subreaper)

    def close(self) -> None:
        """Ends every process started since `open` (naming each), then puts back each changed file; raises
        `CommandFileWritten` for the first one changed. A second call does nothing."""
        if self.closed:
            return
        self.closed = True
        escaped = None
        try:
            ended = end_new_descendants(self.known)
        except DescendantsEscaped as exc:
            ended, escaped = [], str(exc)
        finally:
            _restore_subreaper(self.subreaper)
        for process in ended[:SHOWN_ENDED]:
            print(
                f"ended {process.name} (pid {process.pid}), which the pull request's code left running", file=sys.stderr
            )
        if len(ended) > SHOWN_ENDED:
            print(
                f"ended {len(ended) - SHOWN_ENDED} more processes the pull request's code left running", file=sys.stderr
            )
        changed = [kept for kept in self.kept if _keep(kept.path, kept.variable) != kept]
        failed = []
        for kept in changed:
            try:
                _put_back(kept)
            except OSError as exc:  # it made the folder unwritable: the run fails all the same, and says so
                failed.append(f"{kept.variable} could not be put back ({exc.strerror or exc})")
        if escaped is not None:  # what still runs could write the files after any check: nothing is trusted
            raise CommandFileWritten(
                None,
                "setup",
                f"{escaped}, so the runner's command files cannot be trusted, and this run fails",
                "do not leave processes running from setup, the agents or the metrics",
            )
        if changed:
            first = changed[0]
            names = ", ".join(kept.variable for kept in changed)
            done = "; ".join(failed) if failed else "put back as it was"
            raise CommandFileWritten(
                first.path,
                first.variable,
                f"the pull request's code wrote the runner's command file ({names}); {done}, and this run fails",
                "find what in setup, the agents or the metrics writes it; nothing the pull request runs may",
            )
