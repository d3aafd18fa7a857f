"""No process the pull request's code runs can reach GitHub's tokens: called first by the console entry and the
Action's entry, before anything is started.

1. The tokens move out of the environment into `held_tokens` (so no child inherits them), and out of the
   process's *initial* environment too, which `/proc/<pid>/environ` shows whatever `os.environ` says: its bytes
   are overwritten in place (Linux), else the interpreter is started again with the clean environment and the
   tokens handed over on a pipe read and closed at once.
2. This process becomes non-dumpable: its `/proc/<pid>/environ`, `mem`, `fd` and ptrace then need
   CAP_SYS_PTRACE, even for a process of the same user.
3. No process started from here can gain privileges (`no_new_privs`: sudo and setuid binaries do nothing), and
   none gets back the capabilities that read another process's memory or the kernel's (dropped from the
   bounding, inheritable and ambient sets; Docker withholds the same ones from a container). They are only
   needed to read this process: nothing we start needs them.

Children are exec'd (`subprocess`, the agent host), so they start from clean memory with none of these
capabilities. Anything that cannot be guaranteed is returned as a one-line reason for the caller to print.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Mapping
from typing import Any

from adk_eval_gate.core.held_tokens import hold, is_github_token_name, take_tokens

# prctl(2) options and capability numbers (linux/prctl.h, linux/capability.h)
_PR_SET_DUMPABLE, _PR_CAPBSET_DROP, _PR_SET_NO_NEW_PRIVS = 4, 24, 38
_PR_CAP_AMBIENT, _PR_CAP_AMBIENT_CLEAR_ALL = 47, 4
WITHHELD_CAPABILITIES = {
    "CAP_SYS_MODULE": 16,  # a kernel module reads anything
    "CAP_SYS_RAWIO": 17,  # /dev/mem, /proc/kcore
    "CAP_SYS_PTRACE": 19,  # ptrace, /proc/<pid>/mem, environ and fd of a non-dumpable process
    "CAP_SYS_ADMIN": 21,  # bpf and perf before CAP_BPF / CAP_PERFMON existed
    "CAP_PERFMON": 38,
    "CAP_BPF": 39,
}
_HANDOVER = "ADK_EVAL_GATE_TOKENS_FD"  # the pipe a re-exec reads the tokens from (a number, not a secret)
_HANDOVER_LIMIT = 60_000  # below a pipe's buffer: the write must not block before the exec


def isolate_process() -> list[str]:
    """Takes GitHub's tokens out of every environment and hardens this process; returns what it could not do.
    Without a token there is nothing to keep from the children, and nothing is done (nor ctypes imported)."""
    handed, taken = _handed_over(), take_tokens(os.environ)
    if not handed and not taken:
        return []
    problems = harden_process()
    _forget_startup_copy()
    hold({**handed, **taken})
    # A process started again by _exec_again began with a clean environment: only one given tokens needs this.
    if taken and not _wipe_initial_environment():
        _exec_again({**handed, **taken})  # returns only when it cannot
        problems.append("the tokens could not be removed from this process's initial environment")
    return problems


def harden_process() -> list[str]:
    if not sys.platform.startswith("linux"):
        return [f"on {sys.platform}, processes of the same user can read this one's memory (no prctl)"]
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    prctl = libc.prctl
    prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong]
    problems = []
    if prctl(_PR_SET_DUMPABLE, 0, 0, 0, 0) != 0:
        problems.append(f"prctl(PR_SET_DUMPABLE) failed: {os.strerror(ctypes.get_errno())}")
    if prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        problems.append(f"prctl(PR_SET_NO_NEW_PRIVS) failed: {os.strerror(ctypes.get_errno())}")
    prctl(_PR_CAP_AMBIENT, _PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)  # EINVAL before Linux 4.3: nothing to clear then
    bounding, inheritable = _capability_sets()
    for name, number in WITHHELD_CAPABILITIES.items():
        # Without CAP_SETPCAP (not root) this fails, and need not succeed: with no_new_privs an exec can only
        # gain what the inheritable set holds, cleared below.
        if bounding >> number & 1 and prctl(_PR_CAPBSET_DROP, number, 0, 0, 0) != 0 and os.geteuid() == 0:
            problems.append(f"could not drop {name} from the bounding set: {os.strerror(ctypes.get_errno())}")
    if any(inheritable >> number & 1 for number in WITHHELD_CAPABILITIES.values()):
        problems.extend(_clear_inheritable(libc))
    return problems


def _capability_sets() -> tuple[int, int]:
    """(bounding, inheritable) as /proc/self/status shows them."""
    sets = {"CapBnd": 0, "CapInh": 0}
    try:
        with open("/proc/self/status", encoding="ascii", errors="replace") as status:
            for line in status:
                name, _, value = line.partition(":")
                if name in sets:
                    sets[name] = int(value.strip(), 16)
    except (OSError, ValueError):
        return (1 << 64) - 1, (1 << 64) - 1  # unknown: try every drop
    return sets["CapBnd"], sets["CapInh"]


def _clear_inheritable(libc: Any) -> list[str]:  # a ctypes library
    import ctypes

    class Header(ctypes.Structure):
        _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]

    class Data(ctypes.Structure):
        _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32), ("inheritable", ctypes.c_uint32)]

    header, data = Header(0x20080522, 0), (Data * 2)()  # _LINUX_CAPABILITY_VERSION_3: two 32-bit words
    if libc.capget(ctypes.byref(header), data) != 0:
        return [f"capget failed: {os.strerror(ctypes.get_errno())}"]
    for number in WITHHELD_CAPABILITIES.values():
        data[number // 32].inheritable &= ~(1 << number % 32)
    if libc.capset(ctypes.byref(header), data) != 0:
        return [f"could not clear the inheritable capabilities: {os.strerror(ctypes.get_errno())}"]
    return []


def _forget_startup_copy() -> None:
    """`posix.environ`, the bytes copy os.environ was built from, is never updated by it: the tokens leave it too."""
    import posix

    for name in [n for n in posix.environ if is_github_token_name(os.fsdecode(n))]:
        del posix.environ[name]


def _wipe_initial_environment() -> bool:
    """Overwrites every token's `NAME=value` in the environment block the kernel serves as /proc/<pid>/environ
    (the bytes between env_start and env_end); True once a fresh read shows none."""
    if not sys.platform.startswith("linux"):
        return False
    import ctypes

    try:
        with open("/proc/self/stat", "rb") as stat:
            fields = stat.read().rpartition(b")")[2].split()
        start = int(fields[47])  # field 50 of proc(5), counted after the command name (field 2)
        offset = 0
        for entry in _initial_environment():
            if is_github_token_name(os.fsdecode(entry.partition(b"=")[0])):
                ctypes.memset(start + offset, 0, len(entry))
            offset += len(entry) + 1
        return not any(is_github_token_name(os.fsdecode(e.partition(b"=")[0])) for e in _initial_environment())
    except (OSError, ValueError, IndexError):
        return False


def _initial_environment() -> list[bytes]:
    with open("/proc/self/environ", "rb") as environ:
        return environ.read().split(b"\0")


def _exec_again(tokens: Mapping[str, str]) -> None:
    """Starts this command again in this process with the clean environment; the tokens travel on a pipe."""
    data = json.dumps(dict(tokens)).encode()
    # Windows' execve starts another process and ends this one: the console would see the command end at once.
    if os.name != "posix" or len(data) > _HANDOVER_LIMIT or not getattr(sys, "orig_argv", None):
        return
    read, write = os.pipe()
    os.write(write, data)
    os.close(write)
    os.set_inheritable(read, True)
    for stream in (sys.stdout, sys.stderr):
        stream.flush()
    try:
        os.execve(sys.executable, [sys.executable, *sys.orig_argv[1:]], {**os.environ, _HANDOVER: str(read)})
    except OSError:
        os.close(read)


def _handed_over() -> dict[str, str]:
    """The tokens a previous image of this process handed over (`_exec_again`), read and closed at once."""
    fd = os.environ.pop(_HANDOVER, None)
    if fd is None or not fd.isdigit():
        return {}
    chunks = []
    try:
        while chunk := os.read(int(fd), 65536):
            chunks.append(chunk)
        os.close(int(fd))
        tokens = json.loads(b"".join(chunks))
    except (OSError, ValueError):
        return {}
    return {str(k): str(v) for k, v in tokens.items()} if isinstance(tokens, dict) else {}


def exposed_ancestor() -> tuple[int, str, list[str]] | None:
    """The nearest parent process of ours whose own environment holds one of GitHub's tokens and which a process
    of our user can read (a shell given `env: GITHUB_TOKEN`): nothing here can hide that from the pull request's
    code. (pid, command name, the variables' names), or None."""
    pid, uid = os.getppid(), os.getuid()
    seen = set()
    while pid > 1 and pid not in seen:
        seen.add(pid)
        try:
            owner = os.stat(f"/proc/{pid}").st_uid  # root for a non-dumpable process: its environ is not ours
            with open(f"/proc/{pid}/environ", "rb") as environ:
                entries = environ.read().split(b"\0")
            with open(f"/proc/{pid}/stat", "rb") as stat:
                command, _, rest = stat.read().partition(b" (")[2].rpartition(b")")
            parent = int(rest.split()[1])
        except (OSError, ValueError, IndexError):
            return None
        names = sorted(
            name
            for entry in entries
            if (name := os.fsdecode(entry.partition(b"=")[0]))
            and is_github_token_name(name)
            and entry.partition(b"=")[2]
        )
        if names and owner == uid:
            return pid, os.fsdecode(command), names
        pid = parent
    return None
