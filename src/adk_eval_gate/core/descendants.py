"""The processes the pull request's code leaves behind: found, and ended, before we trust a file it could write.

A setup command can start a daemon (`nohup … &`, a double fork, `setsid`) that outlives it and writes the runner's
command files after we checked them (core/command_files.py). On Linux this process becomes a child subreaper
(prctl(PR_SET_CHILD_SUBREAPER)), so such an orphan is reparented to us instead of to init, and stays among our
descendants, where `end_new_descendants` finds and kills it. Elsewhere (no /proc, no prctl) nothing is found.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import time
from dataclasses import dataclass

# prctl(2) options (linux/prctl.h)
_PR_SET_CHILD_SUBREAPER = 36
_PR_GET_CHILD_SUBREAPER = 37
GRACE_SECONDS = 2.0
# How long processes may keep appearing while the rest are frozen before the run fails closed.
FREEZE_SECONDS = 10.0
_EMPTY_SCANS = 3
_POLL_SECONDS = 0.05


@dataclass(frozen=True)
class Process:
    """A process as /proc shows it; `started` (clock ticks after boot) tells a reused pid from the one we saw."""

    pid: int
    parent: int
    name: str
    started: int
    zombie: bool
    stopped: bool = False  # state T or t: it cannot run, so it cannot fork
    group: int = 0  # its process group: a daemon's generations share the group its setsid made


def _prctl(option: int, value: int) -> int | None:
    """prctl's result (or, for a GET, the value read), None where there is none."""
    if not sys.platform.startswith("linux"):
        return None
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    if option == _PR_GET_CHILD_SUBREAPER:
        out = ctypes.c_int(0)
        libc.prctl.argtypes = [ctypes.c_int, ctypes.POINTER(ctypes.c_int), ctypes.c_ulong, ctypes.c_ulong]
        return out.value if libc.prctl(option, ctypes.byref(out), 0, 0) == 0 else None
    libc.prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong]
    return int(libc.prctl(option, value, 0, 0))


def become_subreaper() -> int | None:
    """Orphans among our descendants become our children; returns the previous setting (None: not supported)."""
    previous = _prctl(_PR_GET_CHILD_SUBREAPER, 0)
    if previous is not None:
        _prctl(_PR_SET_CHILD_SUBREAPER, 1)
    return previous


def restore_subreaper(previous: int | None) -> None:
    if previous is not None:
        _prctl(_PR_SET_CHILD_SUBREAPER, previous)


def _read(pid: int) -> Process | None:
    try:
        with open(f"/proc/{pid}/stat", "rb") as file:
            stat = file.read(4096).decode("utf-8", "replace")
    except OSError:
        return None
    # The name is in parentheses and may itself hold spaces and parentheses: the fields follow the last ')'.
    name, _, rest = stat.partition(" (")[2].rpartition(")")
    fields = rest.split()
    if len(fields) < 20:
        return None
    # The name is the process's own choice (prctl(PR_SET_NAME)) and goes to the log: printable ASCII only, so a
    # newline cannot start a workflow command of its own.
    shown = "".join(c if c.isascii() and c.isprintable() else "?" for c in name[:32])
    return Process(
        pid, int(fields[1]), shown, int(fields[19]), fields[0] in ("Z", "X"), fields[0] in ("T", "t"), int(fields[2])
    )


def processes() -> dict[int, Process]:
    try:
        pids = [int(entry) for entry in os.listdir("/proc") if entry.isdigit()]
    except OSError:
        return {}
    found = (_read(pid) for pid in pids)
    return {process.pid: process for process in found if process is not None}


def descendants(root: int | None = None) -> dict[int, Process]:
    """Every living process below `root` (default: this one), however deep."""
    table = processes()
    children: dict[int, list[int]] = {}
    for process in table.values():
        children.setdefault(process.parent, []).append(process.pid)
    found: dict[int, Process] = {}
    stack = list(children.get(os.getpid() if root is None else root, []))
    while stack and len(found) < 100_000:
        pid = stack.pop()
        if pid in found:
            continue
        found[pid] = table[pid]
        stack.extend(children.get(pid, []))
    return {pid: process for pid, process in found.items() if not process.zombie}


def _key(process: Process) -> tuple[int, int]:
    return process.pid, process.started


class DescendantsEscaped(RuntimeError):
    """New processes kept appearing for longer than the freeze allows: some may still be running."""


def end_new_descendants(
    known: dict[int, Process], grace: float = GRACE_SECONDS, freeze_for: float = FREEZE_SECONDS
) -> list[Process]:
    """Kills every descendant that was not among `known` (those living before the pull request's code ran) and
    returns those it signalled.

    First politely: SIGTERM, up to `grace` seconds. Then whatever is left is frozen: every new descendant that is
    not stopped gets SIGSTOP, and the scan is repeated until it finds none running. A stopped process cannot fork,
    so one that forks and exits over and over to change its pid (no fixed number of rounds would catch it) is held
    within a few scans; then all of them get SIGKILL, which a stopped process cannot ignore. Raises
    `DescendantsEscaped` when new ones still run after `freeze_for` seconds."""
    before = {_key(p) for p in known.values()}
    ours = {p.group for p in known.values()} | {os.getpgrp()}  # groups never signalled whole
    ended: dict[tuple[int, int], Process] = {}

    def running() -> list[Process]:
        # A process that forks and exits while /proc is listed can be missed by one scan (the child listed too
        # late, the parent gone): only consecutive empty scans mean that nothing is left.
        for attempt in range(_EMPTY_SCANS):
            found = [p for p in descendants().values() if _key(p) not in before]
            if found:
                break
            time.sleep(_POLL_SECONDS / 10 * (attempt + 1))
        for process in found:
            ended.setdefault(_key(process), process)
        return found

    def stop(process: Process) -> None:
        _signal(process, signal.SIGSTOP)
        if (
            process.group > 0 and process.group not in ours
        ):  # the whole group at once, a generation forked a moment ago included
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(process.group, signal.SIGSTOP)

    left = running()
    for process in left:
        _signal(process, signal.SIGTERM)
    deadline = time.monotonic() + grace
    while left and time.monotonic() < deadline and _alive(left):
        _reap(left)
        time.sleep(_POLL_SECONDS)
    deadline = time.monotonic() + freeze_for
    while left := running():
        while awake := [p for p in left if not p.stopped]:
            for process in awake:
                stop(process)
            if time.monotonic() > deadline:
                raise DescendantsEscaped(f"{len(awake)} process(es) of the pull request's kept starting others")
            time.sleep(0.001)  # the stop takes effect at the process's next return to user space
            left = running()
        for process in left:
            _signal(process, signal.SIGKILL)
        _reap(left)
    return list(ended.values())


def _signal(process: Process, number: int) -> None:
    current = _read(process.pid)
    if current is not None and current.started == process.started and not current.zombie:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(process.pid, number)


def _alive(group: list[Process]) -> bool:
    for process in group:
        current = _read(process.pid)
        if current is not None and current.started == process.started and not current.zombie:
            return True
    return False


def _reap(group: list[Process]) -> None:
    """Our own children among them (orphans reparented to us) are waited for, so none stays a zombie."""
    for process in group:
        with contextlib.suppress(ChildProcessError, OSError):
            os.waitpid(process.pid, os.WNOHANG)
