"""GitHub's tokens, held in this process's memory and nowhere else: never in an environment a child inherits.

Every process we start runs the pull request's code (`setup:`, agents, the agent host that imports them), and
a child inherits our environment. So at its very start the command moves every token GitHub or the runner set
(the workflow token however it came, the runner's `ACTIONS_*_TOKEN`s) out of the environment into this holder;
what needs one (the Actions context, a `pass_env` the config names, masking) asks the holder by name.
`core/isolation.py` then keeps the holder's process out of its children's reach.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Mapping, MutableMapping
from contextlib import contextmanager
from types import MappingProxyType

# GitHub's credentials for this job: the workflow token (however the Action received it) and the runner's own.
_GITHUB_TOKEN_NAME = re.compile(
    r"^(GITHUB_TOKEN|GH_TOKEN|GH_ENTERPRISE_TOKEN|INPUT_GITHUB[-_]TOKEN|ACTIONS_\w*TOKEN\w*)$", re.IGNORECASE
)

_held: dict[str, str] = {}


def is_github_token_name(name: str) -> bool:
    return bool(_GITHUB_TOKEN_NAME.match(name))


def held() -> Mapping[str, str]:
    """Every token held, by the variable name it came in."""
    return MappingProxyType(_held)


def held_token(*names: str) -> str | None:
    """The first of `names` held with a value (an empty variable counts as unset)."""
    return next((_held[name] for name in names if _held.get(name, "").strip()), None)


def hold(values: Mapping[str, str]) -> None:
    _held.update(values)


def take_tokens(environ: MutableMapping[str, str]) -> dict[str, str]:
    """Removes GitHub's tokens from `environ` (os.environ also unsets them in the C environment), returning them."""
    return {name: environ.pop(name) for name in [n for n in environ if is_github_token_name(n)]}


@contextmanager
def holding(environ: MutableMapping[str, str] | None = None) -> Iterator[None]:
    """For one command called in process (a test, the Action's entry): its tokens move from the environment into
    the holder for the call, and back after it, so the caller's environment is as it was."""
    environ = os.environ if environ is None else environ
    saved = dict(_held)
    taken = take_tokens(environ)
    _held.update(taken)
    try:
        yield
    finally:
        _held.clear()
        _held.update(saved)
        for name, value in taken.items():
            environ.setdefault(name, value)
