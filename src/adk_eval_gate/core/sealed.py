"""Our own process, sealed before the pull request's code runs: nothing `setup:`, an agent, or a process either
leaves behind writes into the installed Python (the gate's package, its dependencies, the standard library) is
ever loaded into the process that holds GitHub's tokens.

How: before any of that code starts, every file under the directories this process imports from is recorded by
path with its inode, size, mtime and ctime (a ctime cannot be set back: utime cannot forge it, and a write, a
rename or a link moves it). An import guard, first on `sys.meta_path`, then checks every module this process loads
from those directories against the record:

* a file that changed, or a path now reaching another file (replaced, renamed over, a directory swapped for a
  link), is refused: the import raises `SealBroken` (one line naming the file), the refusal is remembered, and the
  run fails with exit 2 when the seal is checked (`check_sealed`), whatever caught the exception in between;
* a file that is new (absent from the record) is not there for this process: ModuleNotFoundError, as it was
  before setup ran (a package setup installed for the agent is the agent's, never ours);
* source is read and then checked by `fstat` of the very descriptor it was read from, so a file swapped between
  the check and the read is caught too; cached bytecode that is not the recorded file is ignored (the source is
  compiled instead) and none is written.

Checkpoints (`check_sealed`, after setup and before anything is reported) verify the gate's own package files
(templates, schemas, assets) and the files this process trusts for its connections (the CA bundles, /etc/hosts),
which are read rather than imported. Without a token held there is nothing to seal: agents and custom metrics may
then run in this process by design (targets/agent_host.in_own_process).
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import os
import sys
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from importlib.machinery import ModuleSpec
from types import ModuleType
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from typing_extensions import Buffer

from adk_eval_gate.core.errors import InputError

Stat = tuple[int, int, int, int]  # inode, size, mtime, ctime (ns)
# Read, not imported, by the connections this process makes with the token (name resolution, TLS trust).
_TRUSTED_FILES = ("/etc/hosts", "/etc/resolv.conf", "/etc/nsswitch.conf", "/etc/gai.conf")
_FIX = (
    "`setup:` or the pull request's code changed the gate's installed files; install the agent's own packages "
    "without replacing the gate's (docs/trust.md#our-own-process-is-sealed)"
)


class SealBroken(InputError):
    """A file of the install changed after the run sealed it."""

    def __init__(self, path: str, what: str = "changed after the run started") -> None:
        super().__init__(path, None, f"{what}; it is not loaded into the process holding GitHub's token", _FIX)


def _stat_of(result: os.stat_result) -> Stat:
    return result.st_ino, result.st_size, result.st_mtime_ns, result.st_ctime_ns


@dataclass(frozen=True)
class Snapshot:
    roots: tuple[str, ...]  # absolute, never resolved: a link swapped in later must not move a file out of them
    files: Mapping[str, Stat]
    checked: tuple[str, ...]  # what `changed` verifies: files that are read rather than imported

    def covers(self, path: str) -> bool:
        return any(path == root or path.startswith(root + os.sep) for root in self.roots)

    def changed(self) -> list[str]:
        """Every checked file whose path no longer reaches the recorded file unchanged (or is gone)."""
        found = []
        for path in self.checked:
            try:
                now: Stat | None = _stat_of(os.stat(path))
            except OSError:
                now = None
            if now != self.files[path]:
                found.append(path)
        return found


def _walk(directory: str, into: dict[str, Stat]) -> None:
    """Files under `directory`, descending only where Python can import from (package names, __pycache__): not
    `.dist-info`, `.git` or a `node_modules`, which no import reads."""
    try:
        entries = os.scandir(directory)
    except OSError:
        return
    with entries:
        for entry in entries:
            try:
                if entry.is_dir(follow_symlinks=False):
                    if entry.name == "__pycache__" or entry.name.isidentifier():
                        _walk(entry.path, into)
                else:
                    into[entry.path] = _stat_of(entry.stat())
            except OSError:
                continue


def import_roots(path: Sequence[str], package: str) -> list[str]:
    """The directories this process imports from: `path`'s (sys.path's) directories and our package's own (an
    editable install maps it from elsewhere). The current directory ("") is not one: the Action runs `python -P`,
    and a checkout is the pull request's from the start."""
    roots = [os.path.abspath(entry) for entry in path if entry and os.path.isdir(entry)]
    return list(dict.fromkeys([*roots, os.path.abspath(package)]))


def take_snapshot(roots: Iterable[str], checked_dirs: Iterable[str], trusted: Iterable[str]) -> Snapshot:
    files: dict[str, Stat] = {}
    roots = tuple(roots)
    for root in roots:
        _walk(root, files)
    # Bytecode is not among them: another process of the run (the agent host) may rewrite a stale cache file, and
    # the loader checks the one it would read anyway.
    checked_dirs = tuple(d + os.sep for d in checked_dirs)
    checked = [p for p in files if p.startswith(checked_dirs) and f"{os.sep}__pycache__{os.sep}" not in p]
    for path in trusted:
        try:
            files[path] = _stat_of(os.stat(path))
        except OSError:
            continue
        checked.append(path)
    return Snapshot(roots, files, tuple(dict.fromkeys(checked)))


class ImportGuard(importlib.abc.MetaPathFinder):
    """First on sys.meta_path: finds each module as the finders after it would, then lets it load only if its
    file is the one recorded (module docstring)."""

    def __init__(self, snapshot: Snapshot) -> None:
        self.snapshot = snapshot
        self.refused: list[str] = []

    def refuse(self, path: str) -> SealBroken:
        self.refused.append(path)
        return SealBroken(path)

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> ModuleSpec | None:
        for finder in sys.meta_path:
            find = getattr(finder, "find_spec", None)
            if finder is self or find is None:
                continue
            spec: ModuleSpec | None = find(fullname, path, target)
            if spec is not None:
                return self._checked(spec)
        return None

    def _checked(self, spec: ModuleSpec) -> ModuleSpec:
        origin = spec.origin
        if not spec.has_location or not origin or not self.snapshot.covers(os.path.abspath(origin)):
            return spec
        origin = os.path.abspath(origin)
        recorded = self.snapshot.files.get(origin)
        if recorded is None:
            raise ModuleNotFoundError(f"No module named {spec.name!r} (added after the run started)", name=spec.name)
        try:
            now = _stat_of(os.stat(origin))
        except OSError:
            now = None
        if now != recorded:
            raise self.refuse(origin)
        if isinstance(spec.loader, importlib.machinery.SourceFileLoader):
            spec.loader = _VerifiedSourceLoader(spec.name, origin, self)
        return spec


class _VerifiedSourceLoader(importlib.machinery.SourceFileLoader):
    """Reads a module's source and bytecode only as recorded: checked by fstat of the descriptor read from."""

    def __init__(self, fullname: str, path: str, guard: ImportGuard) -> None:
        super().__init__(fullname, path)
        self._guard = guard

    def get_data(self, path: str) -> bytes:
        with open(path, "rb") as file:
            data = file.read()
            now = _stat_of(os.fstat(file.fileno()))
        if now == self._guard.snapshot.files.get(os.path.abspath(path)):
            return data
        if os.path.abspath(path) == os.path.abspath(self.path):
            raise self._guard.refuse(os.path.abspath(path))
        raise OSError(f"{path}: not the recorded bytecode")  # the loader compiles the source instead

    def set_data(self, path: str, data: Buffer, *, _mode: int = 0o666) -> None:
        """No bytecode is written into the install: it would be a file the record does not know."""


def current_guard() -> ImportGuard | None:
    return next((finder for finder in sys.meta_path if isinstance(finder, ImportGuard)), None)


def check_sealed() -> None:
    """Fails the run (SealBroken, exit 2) if the sealed process refused a module or a checked file changed; does
    nothing when the process is not sealed."""
    guard = current_guard()
    if guard is None:
        return
    broken = [*guard.refused, *guard.snapshot.changed()]
    if broken:
        more = f" (and {len(broken) - 1} more file(s))" if len(broken) > 1 else ""
        raise SealBroken(broken[0], f"changed after the run started{more}")


def trusted_files() -> list[str]:
    """The files this process's connections read: name resolution's, and the CA bundles (certifi's is under an
    import root and is checked with the package files; these are the system's)."""
    import ssl

    paths = ssl.get_default_verify_paths()
    candidates: list[str | None] = [*_TRUSTED_FILES, paths.cafile, paths.openssl_cafile]
    candidates += [os.environ.get(name) for name in ("REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE", "SSL_CERT_FILE")]
    return [os.path.abspath(path) for path in dict.fromkeys(candidates) if path and os.path.isfile(path)]


@contextmanager
def sealed(holding_tokens: bool) -> Iterator[ImportGuard | None]:
    """Seals this process for the block when it holds a token (nothing to seal otherwise); checked on a normal
    exit, and unsealed however it ends (a test suite or a caller in process goes on)."""
    if not holding_tokens or current_guard() is not None:
        yield current_guard()
        return
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # adk_eval_gate/, this is core/sealed.py
    roots = import_roots(sys.path, package)
    certifi = [os.path.join(root, "certifi") for root in roots]  # requests' CA bundle
    snapshot = take_snapshot(roots, [package, *certifi], trusted_files())
    guard = ImportGuard(snapshot)
    sys.meta_path.insert(0, guard)
    try:
        yield guard
        check_sealed()
    finally:
        sys.meta_path.remove(guard)
