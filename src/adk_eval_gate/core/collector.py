"""Python's cyclic collector, tuned for a command that loads a large run and keeps it until the command ends.

Loading a 10,000-case results file allocates millions of container objects that all live on; the collector's
default thresholds walk them again and again as they age (more than half of `compare`'s CPU on large suites). While
loading, the collector is off; once loaded, what exists is frozen out of its sight and it runs only after many
allocations — most garbage here goes with its last reference anyway. Everything is restored when the command ends,
so a caller in the same process (a test, the pytest plugin) gets the interpreter back as it was.

A command that loads more once its agents have run (`ci`: the baseline and history, and the comparison built on
them, after the run built its results) says so with `reading_again()`, and `finish` ends it with `read_again()`
once the comparison is built: the collector is off in between and what exists then (the run's results too) is
frozen with the rest. Outside such a command both do nothing, so steps shared with other commands (`merge`) need
not know which one called them.
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

# Young objects collected after this many allocations (default 700): the command's temporaries are mostly freed by
# reference counting, so a cycle waits a little longer at no cost.
BULK_THRESHOLD = (20_000, 50, 100)


@dataclass
class _Bulk:
    enabled: bool  # the caller's switch, given back at the end
    frozen: bool = False
    reading: bool = False  # off again for a later load (`reading_again`)


_open: list[_Bulk] = []  # the `bulk_data` blocks of this process, innermost last


@contextmanager
def bulk_data() -> Iterator[Callable[[], None]]:
    """`with bulk_data() as loaded: read…; loaded(); work…` — `loaded()` marks the end of the big reads."""
    threshold = gc.get_threshold()
    bulk = _Bulk(gc.isenabled())

    def loaded() -> None:
        if bulk.frozen:
            return
        gc.freeze()
        gc.set_threshold(*BULK_THRESHOLD)
        bulk.frozen = True
        if bulk.enabled:
            gc.enable()

    gc.disable()
    _open.append(bulk)
    try:
        yield loaded
    finally:
        _open.remove(bulk)
        if bulk.frozen:
            gc.unfreeze()
        gc.set_threshold(*threshold)
        if bulk.enabled:
            gc.enable()
        else:
            gc.disable()


def reading_again() -> None:
    """Inside a `bulk_data` whose first reads are done: the collector off while more that lives until the end is
    read, until `read_again()`. Only where no code but ours runs until then (never around an agent run here)."""
    if _open and _open[-1].frozen:
        _open[-1].reading = True
        gc.disable()


def read_again() -> None:
    """The end of what `reading_again()` began: everything that exists now is frozen too, the collector back on."""
    if not (_open and _open[-1].reading):
        return
    _open[-1].reading = False
    gc.freeze()
    if _open[-1].enabled:
        gc.enable()
