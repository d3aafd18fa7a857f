"""Reading user files defensively: every way a file can be unreadable becomes an `InputError`."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

import yaml

from .errors import InputError
from .redaction import redact

# Eval sets are human-authored and ADK history files grow ~60 KB per case; 512 MiB is far past any real
# suite and keeps a mistaken path (a model checkpoint, a log) from exhausting memory.
MAX_FILE_BYTES = 512 * 1024 * 1024


def read_text(path: Path, what: str) -> str:
    if not path.exists():
        raise InputError(path, None, f"{what} not found", "check the path (relative paths resolve against the config file's directory)")
    if path.is_dir():
        raise InputError(path, None, f"{what} is a directory, not a file", "point at a file")
    try:
        size = path.stat().st_size
        if size > MAX_FILE_BYTES:
            raise InputError(path, None, f"{what} is {size} bytes, larger than the {MAX_FILE_BYTES} byte limit", "point at the right file")
        raw = path.read_bytes()
    except OSError as exc:
        raise InputError(path, None, f"cannot read {what}: {exc.strerror or exc}", "check the file's permissions") from None
    if b"\x00" in raw[:8192]:
        raise InputError(path, None, f"{what} is a binary file, not text", "point at a UTF-8 JSON/YAML file")
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputError(path, None, f"{what} is not valid UTF-8 (byte {exc.start})", "save the file as UTF-8") from None
    if not text.strip():
        raise InputError(path, None, f"{what} is empty", "add content or remove it from the config")
    return text


def parse_json(text: str, path: Path, what: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(path, None, f"{what} is not valid JSON: {exc.msg} (column {exc.colno})", "fix the JSON syntax", line=exc.lineno) from None
    except RecursionError:
        raise InputError(path, None, f"{what} is nested too deeply to be an eval file", "flatten the JSON") from None
    except ValueError:  # an integer literal with thousands of digits
        raise InputError(path, None, f"{what} holds a number too long to read", "remove the absurd number") from None


def load_json(path: Path, what: str) -> Any:
    return parse_json(read_text(path, what), path, what)


def load_yaml(path: Path, what: str) -> tuple[Any, yaml.Node | None]:
    """Returns the parsed document and its node tree (used to point errors at line numbers)."""
    text = read_text(path, what)
    try:
        loader = yaml.SafeLoader(text)
        try:
            node = loader.get_single_node()
            data = loader.construct_document(node) if node is not None else None
        finally:
            loader.dispose()
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark is not None else None
        problem = (exc.problem or exc.context or "syntax error").strip()
        raise InputError(path, None, f"{what} is not valid YAML: {problem}", "fix the YAML syntax", line=line) from None
    except yaml.YAMLError as exc:
        raise InputError(path, None, f"{what} is not valid YAML: {str(exc).splitlines()[0]}", "fix the YAML syntax") from None
    except RecursionError:
        raise InputError(path, None, f"{what} is nested too deeply", "flatten the YAML") from None
    except ValueError:  # an integer with thousands of digits
        raise InputError(path, None, f"{what} holds a number too long to read", "remove the absurd number") from None
    _reject_duplicate_keys(node, path, what)
    return data, node


def _reject_duplicate_keys(root: yaml.Node | None, path: Path, what: str) -> None:
    """YAML keeps the last of two equal keys without a word; in a gate's config that hides a mistake."""
    stack = [root] if root is not None else []
    while stack:
        node = stack.pop()
        if isinstance(node, yaml.MappingNode):
            seen: dict[object, int] = {}
            for key, value in node.value:
                name = getattr(key, "value", None)
                if isinstance(name, str) and name in seen:
                    raise InputError(path, name, f"appears twice in {what} (lines {seen[name]} and {key.start_mark.line + 1})",
                                     "keep one; YAML would silently use the last", line=key.start_mark.line + 1)
                if isinstance(name, str):
                    seen[name] = key.start_mark.line + 1
                stack.append(value)
        elif isinstance(node, yaml.SequenceNode):
            stack.extend(node.value)


def write_text_atomic(path: Path, text: str) -> None:
    """Readers (a concurrent job, an upload step) never see a half-written file; no secret is ever written."""
    text = redact(text)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def append_text(path: Path, text: str) -> None:
    """For files others append to as well (GitHub's step summary and job outputs); no secret is ever written."""
    with path.open("a", encoding="utf-8") as handle:
        handle.write(redact(text))
