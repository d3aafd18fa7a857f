"""Reading user files defensively: every way a file can be unreadable becomes an `InputError`."""

from __future__ import annotations

import json
import os
import re
import stat
import tempfile
from pathlib import Path
from typing import Any

from adk_eval_gate.core.errors import InputError, WriteError
from adk_eval_gate.core.redaction import redact

# Eval sets are human-authored and ADK history files grow ~60 KB per case; 512 MiB is far past any real
# suite and keeps a mistaken path (a model checkpoint, a log) from exhausting memory.
MAX_FILE_BYTES = 512 * 1024 * 1024


def _kind_of(mode: int) -> str | None:
    """What a non-regular file is, in words; None for a regular file."""
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a named pipe"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "not a regular file"


def read_bytes(path: Path, what: str) -> bytes:
    """The one way user files are read. Anything but a regular file is refused before it is opened: reading a named
    pipe or a device blocks forever or never ends."""
    try:
        info = os.stat(path)
    except FileNotFoundError:
        raise InputError(
            path,
            None,
            f"{what} not found",
            "check the path (relative paths resolve against the config file's directory)",
        ) from None
    except (OSError, ValueError) as exc:  # ELOOP, ENAMETOOLONG, ENOTDIR, a NUL byte in the name
        raise InputError(
            path, None, f"cannot read {what}: {getattr(exc, 'strerror', None) or exc}", "check the path"
        ) from None
    kind = _kind_of(info.st_mode)
    if kind is not None:
        raise InputError(path, None, f"{what} is {kind}, not a file", "point at a regular file")
    if info.st_size > MAX_FILE_BYTES:
        raise InputError(
            path,
            None,
            f"{what} is {info.st_size} bytes, larger than the {MAX_FILE_BYTES} byte limit",
            "point at the right file",
        )
    try:
        # O_NONBLOCK: a file swapped for a pipe between stat and open still cannot block the open.
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0))
        with os.fdopen(fd, "rb") as handle:
            if _kind_of(os.fstat(handle.fileno()).st_mode) is not None:
                raise InputError(path, None, f"{what} is not a regular file", "point at a regular file")
            return handle.read(MAX_FILE_BYTES + 1)[:MAX_FILE_BYTES]
    except OSError as exc:
        raise InputError(
            path, None, f"cannot read {what}: {exc.strerror or exc}", "check the file's permissions"
        ) from None


def read_text(path: Path, what: str) -> str:
    raw = read_bytes(path, what)
    if b"\x00" in raw[:8192]:
        raise InputError(path, None, f"{what} is a binary file, not text", "point at a UTF-8 JSON/YAML file")
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputError(
            path, None, f"{what} is not valid UTF-8 (byte {exc.start})", "save the file as UTF-8"
        ) from None
    if not text.strip():
        raise InputError(path, None, f"{what} is empty", "add content or remove it from the config")
    return text


def parse_json(text: str, path: Path, what: str) -> Any:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(
            path,
            None,
            f"{what} is not valid JSON: {exc.msg} (column {exc.colno})",
            "fix the JSON syntax",
            line=exc.lineno,
        ) from None
    except RecursionError:
        raise InputError(path, None, f"{what} is nested too deeply to read", "flatten the JSON") from None
    except ValueError:  # an integer literal with thousands of digits
        raise InputError(path, None, f"{what} holds a number too long to read", "remove the absurd number") from None
    escape = _SURROGATE_ESCAPE.search(text)
    if escape is not None and has_lone_surrogate(data):
        # JSON allows `\ud800` alone, but no UTF-8 file can hold it: every results file written from it would fail.
        line = text.count("\n", 0, escape.start()) + 1
        raise InputError(
            path,
            None,
            f"{what} holds a lone UTF-16 surrogate escape (\\ud800-\\udfff)",
            "write the character itself or a complete surrogate pair",
            line=line,
        )
    return data


_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")
_SURROGATE = re.compile("[\ud800-\udfff]")


def has_lone_surrogate(data: object) -> bool:
    stack = [data]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            if _SURROGATE.search(item):
                return True
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return False


def has_surrogates(text: str) -> bool:
    """True for text that no UTF-8 file can hold: a name or argument that was not valid UTF-8 bytes."""
    return _SURROGATE.search(text) is not None


def scrub_surrogates(text: str) -> str:
    """Agent output may carry lone surrogates (from JSON `\\ud800`); UTF-8 cannot, so they become U+FFFD."""
    return _SURROGATE.sub("\ufffd", text)


def _utf8(text: str) -> bytes:
    try:  # almost always: the encoding a write needs anyway is the check that nothing needs scrubbing
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return scrub_surrogates(text).encode("utf-8")


def scrub_data(data: object) -> Any:
    if isinstance(data, str):
        return scrub_surrogates(data)
    if isinstance(data, dict):
        return {scrub_data(k): scrub_data(v) for k, v in data.items()}
    if isinstance(data, list):
        return [scrub_data(v) for v in data]
    return data


def load_json(path: Path, what: str) -> Any:
    return parse_json(read_text(path, what), path, what)


def _umask() -> int:
    """The process umask, read without changing it (os.umask would race with other threads)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _temp_beside(path: Path, data: bytes) -> Path:
    """`data` in a new file in `path`'s folder, ready to be renamed onto it; nothing is left behind on failure."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        os.fchmod(fd, 0o666 & ~_umask())  # mkstemp makes 0600; an output file is as readable as any other
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()  # ENOSPC surfaces here at the latest, never at a close nobody checks
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return Path(tmp)


def write_text_atomic(path: Path, text: str) -> None:
    """Readers (a concurrent job, an upload step) never see a half-written file; no secret is ever written. A full
    disk (or a quota, a read-only or unwritable folder) is a `WriteError` naming the file: the old file stays."""
    try:
        tmp = _temp_beside(path, _utf8(redact(text)))
    except OSError as exc:
        raise WriteError(path, exc) from None
    try:
        os.replace(tmp, path)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise WriteError(path, exc) from None


def _content(content: str | bytes) -> bytes:
    """Text is written redacted; bytes (a database) are written as they are."""
    return content if isinstance(content, bytes) else _utf8(redact(content))


def write_bytes_atomic(path: Path, data: bytes) -> None:
    """`write_text_atomic` for binary files (the history database)."""
    try:
        tmp = _temp_beside(path, data)
    except OSError as exc:
        raise WriteError(path, exc) from None
    try:
        os.replace(tmp, path)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise WriteError(path, exc) from None


def replace_together(files: list[tuple[Path, str | bytes]]) -> None:
    """Files that must change together (a baseline and its history): all of them, or none. Every new file is
    written in full beside its target first, which is where a full disk fails, with nothing changed yet; then
    each is renamed onto its target, the old one kept as a hard link until all are in place, so that a rename that
    fails puts back the ones before it."""
    written: list[tuple[Path, Path]] = []
    try:
        for path, content in files:
            written.append((path, _temp_beside(path, _content(content))))
    except OSError as exc:
        for _, tmp in written:
            tmp.unlink(missing_ok=True)
        raise WriteError(files[len(written)][0], exc, done="nothing was changed") from None
    kept: list[tuple[Path, Path | None]] = []  # (target, its old version, or None when it was new): replaced
    try:
        for path, tmp in written:
            old = None
            if path.exists():
                old = path.with_name(f".{path.name}.old.{os.getpid()}.{os.urandom(4).hex()}")
                os.link(path, old)  # the old version under a second name: putting it back is a rename
            try:
                os.replace(tmp, path)
            except OSError:
                if old is not None:
                    old.unlink(missing_ok=True)
                raise
            kept.append((path, old))
    except OSError as exc:
        undone = _put_back(kept)
        for _, tmp in written:
            tmp.unlink(missing_ok=True)
        raise WriteError(written[len(kept)][0], exc, done=undone) from None
    for _, old in kept:
        if old is not None:
            old.unlink(missing_ok=True)


def _put_back(kept: list[tuple[Path, Path | None]]) -> str:
    """The files already replaced, restored from their old versions (a rename: it needs no free space)."""
    problems = []
    for path, old in reversed(kept):
        try:
            if old is None:
                path.unlink(missing_ok=True)
            else:
                os.replace(old, path)
        except OSError as exc:
            problems.append(f"{path} could not be put back ({exc.strerror or exc})")
    for _, old in kept:
        if old is not None:
            old.unlink(missing_ok=True)
    return "; ".join(problems) or "nothing was changed"


def append_text(path: Path, text: str) -> None:
    """For files others append to as well (GitHub's step summary and job outputs); no secret is ever written."""
    try:
        with path.open("a", encoding="utf-8") as handle:
            handle.write(redact(text))
    except OSError as exc:
        raise WriteError(path, exc) from None


def _blocking_ancestor(path: Path) -> tuple[Path, str] | None:
    """The nearest existing ancestor, when it cannot hold `path`: a file, or a directory we may not write."""
    for parent in path.parents:  # as given, so the message names the path the way the user wrote it
        try:
            info = os.stat(parent)
        except FileNotFoundError:
            continue
        except OSError as exc:
            return parent, exc.strerror or str(exc)
        if not stat.S_ISDIR(info.st_mode):
            return parent, "is a file, not a directory"
        if not os.access(parent, os.W_OK | os.X_OK):
            return parent, "is not writable"
        return None
    return None


def check_output_file(text: str | os.PathLike[str], field: str, *, append: bool = False) -> Path:
    """Refuses an output path that cannot be written before any work is done, so a bad path never costs a run
    (or leaves the run's other files behind). `append` files (GitHub's step summary) must be regular if present."""
    if not str(text).strip() or "\x00" in str(text):
        raise InputError(
            None, field, "is an empty path" if not str(text).strip() else "holds a NUL byte", "give a file path"
        )
    path = Path(text)
    try:
        info = os.stat(path)
    except (FileNotFoundError, NotADirectoryError):  # the second: a parent is a file, named below
        info = None
    except OSError as exc:
        raise InputError(None, field, f"{path}: {exc.strerror or exc}", "give a writable file path") from None
    if info is not None:
        kind = _kind_of(info.st_mode)
        if kind is not None and not (append and stat.S_ISCHR(info.st_mode)):  # appending to /dev/null is harmless
            raise InputError(None, field, f"{path} is {kind}", "give a file path, not a directory or a special file")
        if not os.access(path, os.W_OK):
            raise InputError(None, field, f"{path} is not writable", "give a writable file path")
        return path
    if append and not path.parent.is_dir():
        raise InputError(
            None, field, f"the directory of {path} does not exist", "point at a file in an existing directory"
        )
    if (blocked := _blocking_ancestor(path)) is not None:
        raise InputError(
            None, field, f"{path} cannot be created: {blocked[0]} {blocked[1]}", "give a writable file path"
        )
    return path


def check_output_dir(text: str | os.PathLike[str], field: str) -> Path:
    if not str(text).strip() or "\x00" in str(text):
        raise InputError(
            None, field, "is an empty path" if not str(text).strip() else "holds a NUL byte", "give a directory path"
        )
    path = Path(text)
    try:
        info = os.stat(path)
    except (FileNotFoundError, NotADirectoryError):
        info = None
    except OSError as exc:
        raise InputError(None, field, f"{path}: {exc.strerror or exc}", "give a writable directory") from None
    if info is not None:
        if not stat.S_ISDIR(info.st_mode):
            raise InputError(
                None, field, f"{path} exists and is not a directory", "give a directory path (it is created if missing)"
            )
        if not os.access(path, os.W_OK | os.X_OK):
            raise InputError(None, field, f"{path} is not writable", "give a writable directory")
        return path
    if (blocked := _blocking_ancestor(path)) is not None:
        raise InputError(
            None, field, f"{path} cannot be created: {blocked[0]} {blocked[1]}", "give a writable directory"
        )
    return path


def existing_input(value: str, option: str) -> Path:
    """A path the user typed for us to read: a typo must fail here, not turn into "nothing to compare"."""
    if not os.path.lexists(value):
        raise InputError(
            None,
            option,
            f"no file at {value}",
            "pass an existing results file (relative paths resolve against the working directory)",
        )
    return Path(value)
