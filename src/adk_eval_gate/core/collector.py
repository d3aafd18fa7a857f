"""Python's cyclic collector, tuned for a command that loads a large run and keeps it until the command ends.

Loading a 10,000-case results file allocates millions of container objects that all live on; the collector's
default thresholds walk them again and again as they age (more than half of `compare`'s CPU on large suites). While
loading, the collector is off; once loaded, what exists is frozen out of its sight and it runs only after many
allocations — most garbage here goes with its last reference anyway. Everything is restored when the command ends,
so a caller in the same process (a test, the pytest plugin) gets the interpreter back as it was.
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterator
from contextlib import contextmanager

# Young objects collected after this many allocations (default 700): the command's temporaries are mostly freed by
# reference counting, so a cycle waits a little longer at no cost.
BULK_THRESHOLD = (20_000, 50, 100)


@contextmanager
def bulk_data() -> Iterator[Callable[[], None]]:
    """`with bulk_data() as loaded: read…; loaded(); work…` — `loaded()` marks the end of the big reads."""
    enabled, threshold = gc.isenabled(), gc.get_threshold()
    frozen = False

    def loaded() -> None:
        nonlocal frozen
        if frozen:
            return
        gc.freeze()
        gc.set_threshold(*BULK_THRESHOLD)
        frozen = True
        if enabled:
            gc.enable()

    gc.disable()
    try:
        yield loaded
    finally:
        if frozen:
            gc.unfreeze()
        gc.set_threshold(*threshold)
        if enabled:
            gc.enable()
        else:
            gc.disable()
