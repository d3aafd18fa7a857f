"""What a path or glob in the config probably meant, when it names nothing: `eval/*.evalset.json` when the folder
is `evals/`, `helo_world` for `hello_world`, `*.evalsets.json` for `*.evalset.json`.

The first component that does not exist is replaced by the closest name in its folder, and a final glob's literal
tail by the closest file-name tail found there; a suggestion is offered only if it matches something.
"""

from __future__ import annotations

import fnmatch
from pathlib import Path

from adk_eval_gate.config.workflow_settings import is_glob
from adk_eval_gate.core.errors import did_you_mean

# A folder this large is not listed for a guess: a suggestion is a courtesy, never a cost.
_MAX_NAMES = 2000


def _names(folder: Path) -> list[str]:
    try:
        names = []
        for index, entry in enumerate(folder.iterdir()):
            if index >= _MAX_NAMES:
                break
            names.append(entry.name)
        return names
    except OSError:
        return []


def _tails(names: list[str]) -> set[str]:
    """Every suffix of a name that starts at a dot: dice.evalset.json → .evalset.json, .json."""
    return {name[i:] for name in names for i, char in enumerate(name) if char == "." and i > 0}


def _fix_glob(folder: Path, component: str) -> str | None:
    """`*.evalsets.json` → `*.evalset.json` when files here end in `.evalset.json`."""
    star = component.rfind("*")
    if star < 0:
        return None
    head, tail = component[: star + 1], component[star + 1 :]
    names = _names(folder)
    guess = did_you_mean(tail, _tails(names)) if tail else None
    if guess is None:
        return None
    fixed = head + guess
    return fixed if any(fnmatch.fnmatch(name, fixed) for name in names) else None


def near_miss(base: Path, pattern: str) -> str | None:
    written = Path(pattern)
    parts = written.parts
    if not parts:
        return None
    absolute = written.is_absolute()
    here = Path(parts[0]) if absolute else base
    fixed: list[str] = [parts[0]] if absolute else []
    changed = False
    for index in range(1 if absolute else 0, len(parts)):
        part = parts[index]
        if is_glob(part):
            last = index == len(parts) - 1
            matches = last and any(fnmatch.fnmatch(name, part) for name in _names(here))
            if not matches:
                replacement = _fix_glob(here, part) if last else None
                if replacement is None:
                    return None
                part, changed = replacement, True
            fixed.extend([part, *parts[index + 1 :]])
            break
        if not (here / part).exists():
            guess = did_you_mean(part, _names(here))
            if guess is None:
                return None
            part, changed = guess, True
        fixed.append(part)
        here = here / part
    if not changed:
        return None
    suggestion = str(Path(*fixed))
    if is_glob(suggestion):
        return suggestion
    return suggestion if (base / suggestion).exists() or Path(suggestion).exists() else None
