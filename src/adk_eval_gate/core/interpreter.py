"""What a command changes in the interpreter for its run, put back when the run ends: a caller in the same process
(a test suite, the pytest plugin, an integration calling `main` twice) finds sys.path, the environment, the module
table's entries and the cyclic collector as they were. One context manager per kind, and `restored_interpreter`
for all of them.

Imports themselves stay: a module imported by the run is the import cache, not a change of state, and importing
google-adk again per run would be slow and would make its classes two. What is restored is what the run replaced:
a path put first, a variable set (an agent's `.env`, ADK's span setting), a module entry overwritten or made a
negative cache (`None`), the collector's thresholds, freeze and switch.
"""

from __future__ import annotations

import gc
import os
import sys
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager


@contextmanager
def restored_sys_path() -> Iterator[None]:
    saved = list(sys.path)
    try:
        yield
    finally:
        sys.path[:] = saved  # in place: importlib and others hold this very list


@contextmanager
def restored_environ() -> Iterator[None]:
    """Variables the run set, changed or removed are put back (through os.environ, so the C environment that child
    processes inherit follows). Taken inside `core.held_tokens.holding`, so the tokens it holds stay out."""
    saved = dict(os.environ)
    try:
        yield
    finally:
        for name in [n for n in os.environ if n not in saved]:
            del os.environ[name]
        for name, value in saved.items():
            if os.environ.get(name) != value:
                os.environ[name] = value


@contextmanager
def restored_modules() -> Iterator[None]:
    """Entries the run overwrote get their module back; negative entries (`None`: "do not try this import again")
    it added are dropped, so a later caller may import what this run gave up on."""
    saved = dict(sys.modules)
    try:
        yield
    finally:
        for name, module in list(sys.modules.items()):
            if name not in saved:
                if module is None:
                    del sys.modules[name]
            elif saved[name] is not module:
                sys.modules[name] = saved[name]
        for name in [n for n in saved if n not in sys.modules]:
            sys.modules[name] = saved[name]


@contextmanager
def restored_gc() -> Iterator[None]:
    """The collector's switch and thresholds, and its freeze: objects the run froze are handed back to it (those
    frozen before the run stay frozen only if nothing was frozen since, as gc cannot unfreeze part)."""
    enabled, threshold, frozen = gc.isenabled(), gc.get_threshold(), gc.get_freeze_count()
    try:
        yield
    finally:
        if frozen == 0 and gc.get_freeze_count():
            gc.unfreeze()
        gc.set_threshold(*threshold)
        if enabled:
            gc.enable()
        else:
            gc.disable()


@contextmanager
def restored_interpreter() -> Iterator[None]:
    with ExitStack() as stack:
        for restored in (restored_sys_path, restored_environ, restored_modules, restored_gc):
            stack.enter_context(restored())
        yield
