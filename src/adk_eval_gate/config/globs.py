"""Glob expansion that always ends: `**` never follows a directory symlink, so a link loop cannot make the walk
endless (glob.glob follows them, and a tree with a few loops takes exponential time)."""

from __future__ import annotations

import fnmatch
import os
import re
from collections.abc import Iterator
from pathlib import Path

_MAGIC = re.compile(r"[*?\[]")
# A repository's eval files sit among at most tens of thousands of entries; `/**` would walk the whole disk.
MAX_ENTRIES = 200_000


class GlobTooWide(Exception):
    """The pattern walks more than MAX_ENTRIES directory entries."""


def walk_glob(pattern: Path) -> list[Path]:
    """Every path matching an absolute pattern, sorted; hidden names match only a part that starts with a dot,
    as with glob.glob."""
    parts = pattern.parts
    fixed = next((i for i, part in enumerate(parts) if _MAGIC.search(part)), len(parts))
    root = Path(*parts[:fixed]) if fixed else Path(".")
    found: set[Path] = set()
    if fixed == len(parts):
        return [root] if os.path.lexists(root) else []
    budget = [MAX_ENTRIES]
    for path in _match(root, parts[fixed:], budget):
        found.add(path)
    return sorted(found)


def _entries(directory: Path, budget: list[int]) -> list[os.DirEntry[str]]:
    try:
        with os.scandir(directory) as entries:
            listed = list(entries)
    except OSError:  # unreadable, vanished, not a directory
        return []
    budget[0] -= len(listed)
    if budget[0] < 0:
        raise GlobTooWide(f"walks more than {MAX_ENTRIES} files and folders")
    return listed


def _is_dir(entry: os.DirEntry[str], *, follow: bool) -> bool:
    try:
        return entry.is_dir(follow_symlinks=follow)
    except OSError:
        return False


def _match(directory: Path, parts: tuple[str, ...], budget: list[int]) -> Iterator[Path]:
    part, rest = parts[0], parts[1:]
    if part == "**":  # zero or more directories; never through a directory symlink
        stack = [directory]
        while stack:
            current = stack.pop()
            if rest:
                yield from _match(current, rest, budget)
            for entry in _entries(current, budget):
                if entry.name.startswith("."):
                    continue
                if not rest:
                    yield Path(entry.path)
                if _is_dir(entry, follow=False):
                    stack.append(Path(entry.path))
        return
    if not _MAGIC.search(part):
        candidate = directory / part
        if not rest:
            if os.path.lexists(candidate):
                yield candidate
        elif candidate.is_dir():
            yield from _match(candidate, rest, budget)
        return
    for entry in _entries(directory, budget):
        if entry.name.startswith(".") and not part.startswith("."):
            continue
        if not fnmatch.fnmatchcase(entry.name, part):
            continue
        if not rest:
            yield Path(entry.path)
        elif _is_dir(entry, follow=True):
            yield from _match(Path(entry.path), rest, budget)
