"""Keys that google-adk or agents-cli read past without a word: a warning each, never an error.

A file either tool reads must load here too (issue #35), so a key it ignores cannot be fatal. But a key that is
ignored is usually a typo or a leftover from another tool's format, and the run then measures something else
than its author meant: each warning names the file, line and key, says what the reference tool does instead,
and guesses the key that was meant.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path

import yaml

from adk_eval_gate.core.errors import InputError, did_you_mean, format_loc
from adk_eval_gate.core.validation import LineLookup, yaml_line_lookup

# Past this size a line is not worth composing the file for: warnings come on the happy path, so the bound is a
# quarter of the one core/validation keeps for errors (libyaml composes 4 MiB of JSON in about a second).
LINE_LOOKUP_LIMIT = 4 * 1024 * 1024
# libyaml where it is built in (eight times faster). The file was already parsed as JSON, whose nesting Python's
# own recursion limit bounds, so its composer never meets a document deeper than that.
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def once(path: Path) -> LineLookup:
    """The file's line lookup, composed at most once however many keys ask (and never when none does)."""
    found: list[LineLookup | None] = []

    def lookup(loc: Sequence[str | int]) -> int | None:
        if not found:
            found.append(_composed(path))
        composed = found[0]
        return composed(loc) if composed else None

    return lookup


def _composed(path: Path) -> LineLookup | None:
    if path.suffix.lower() not in {".json", ".yaml", ".yml"}:
        return None
    try:
        if path.stat().st_size > LINE_LOOKUP_LIMIT:
            return None
        # JSON is YAML's flow style: one composer gives the line of a key in either
        root = yaml.compose(path.read_text(encoding="utf-8"), Loader=_LOADER)
    except (OSError, UnicodeDecodeError, yaml.YAMLError, RecursionError):
        return None  # the warning still names the file and the key; only the line is missing
    return yaml_line_lookup(root)


def ignored_key(
    path: Path,
    loc: Sequence[str | int],
    known: Iterable[str],
    effect: str,
    lines: LineLookup | None = None,
) -> InputError:
    """One warning: `file:line: loc: <effect>; did you mean `x`?` (or "remove it")."""
    key = str(loc[-1]) if loc else ""
    guess = did_you_mean(key, sorted(known))
    fix = f"did you mean `{guess}`?" if guess and guess != key else "remove it if it is not meant for another tool"
    return InputError(path, format_loc(loc) or None, effect, fix, line=lines(loc) if lines else None)


def unknown_keys(
    data: object,
    known: Iterable[str],
) -> list[str]:
    """The keys of a mapping that are not among `known` (none for anything but a mapping)."""
    allowed = set(known)
    return [key for key in data if isinstance(key, str) and key not in allowed] if isinstance(data, dict) else []
