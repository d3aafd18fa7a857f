"""A real full disk for the fault tests: a small tmpfs (mounting one needs root, as CI runs), filled to leave a
chosen number of bytes free. Where mounting is not permitted, the fault is made deterministic another way: the
file size limit (RLIMIT_FSIZE, with SIGXFSZ ignored) makes every write past that many bytes fail with EFBIG, the
error a full disk gives as ENOSPC; a test that needs the real errno skips and says why."""

from __future__ import annotations

import os
import resource
import signal
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

PAGE = 4096


class SmallDisk:
    def __init__(self, path: Path, size: int) -> None:
        self.path = path
        path.mkdir(parents=True, exist_ok=True)
        done = subprocess.run(
            ["mount", "-t", "tmpfs", "-o", f"size={size},mode=0755", "tmpfs", str(path)],
            capture_output=True,
            text=True,
            check=False,
        )
        self.mounted = done.returncode == 0
        self.why_not = done.stderr.strip() or f"mount exited {done.returncode}"

    def close(self) -> None:
        if self.mounted:
            subprocess.run(["umount", "-l", str(self.path)], check=False)

    def free(self) -> int:
        info = os.statvfs(self.path)
        return info.f_bavail * info.f_frsize

    @contextmanager
    def leaving(self, free: int) -> Iterator[None]:
        """The disk with only `free` bytes left (the file size limit without a tmpfs) while the block runs."""
        if not self.mounted:
            previous = resource.getrlimit(resource.RLIMIT_FSIZE)
            handler = signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
            resource.setrlimit(resource.RLIMIT_FSIZE, (free, previous[1]))
            try:
                yield
            finally:
                resource.setrlimit(resource.RLIMIT_FSIZE, previous)
                signal.signal(signal.SIGXFSZ, handler)
            return
        filler = self.path / ".filler"
        with filler.open("wb") as handle:
            handle.write(b"\0" * max(0, self.free() - free))
        try:
            yield
        finally:
            filler.unlink()

    def read_only(self) -> None:
        subprocess.run(["mount", "-o", "remount,ro", str(self.path)], check=True)


@contextmanager
def small_disk(path: Path, size: int = 2 * 1024 * 1024) -> Iterator[SmallDisk]:
    disk = SmallDisk(path, size)
    try:
        yield disk
    finally:
        disk.close()
