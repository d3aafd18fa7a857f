"""Secrets stay secret: the values of secret-bearing environment variables never leave this process in clear.

An agent can echo its API key in an error, a judge can quote it, a command agent can print it; whatever we
write (files), post (GitHub request bodies) or print (stdout/stderr) passes through `redact` first. The values
are taken from the environment as it is at each call, so a token set late (the Action maps `INPUT_GITHUB-TOKEN`
to `GITHUB_TOKEN`) is covered too.

The processes we start (setup commands, agents, metrics) never receive GitHub's own tokens, whatever a config
says: they run code from the pull request, and a write token in their hands could approve, push or comment as the
workflow. Nor do they learn where the runner's command files are (core/command_files.py).
"""

from __future__ import annotations

import io
import json
import os
import re
import sys
from collections.abc import Iterable, Mapping
from functools import lru_cache
from typing import Any, TextIO

from adk_eval_gate.core.held_tokens import held, is_github_token_name
from adk_eval_gate.core.printable import ESCAPED_HINT, HIDDEN, hidden_removed, printable

MASK = "***"
# Short values ("1", "true", a port) would mask ordinary text everywhere; real credentials are longer.
MIN_SECRET_LENGTH = 8
# The runner's command files (core/command_files.py): no child learns where they are.
COMMAND_FILE_VARIABLES = ("GITHUB_ENV", "GITHUB_PATH", "GITHUB_OUTPUT", "GITHUB_STEP_SUMMARY", "GITHUB_STATE")
_SECRET_NAME = re.compile(r"TOKEN|SECRET|KEY|PASSWORD", re.IGNORECASE)


def check_pass_env(names: list[str]) -> list[str]:
    """A config may not hand GitHub's tokens to the processes it starts: a pull request edits its own copy of the
    config, so a name here would be its code asking for the token (docs/trust.md). Every other variable reaches
    them anyway, so no name has a use."""
    for name in names:
        if is_github_token_name(name.strip()):
            raise ValueError(
                f"{name!r}: no config can hand GitHub's tokens to the processes the pull request's code runs "
                "(the pull request edits its own copy of this file); remove it, and give a step that needs a "
                "credential a secret of its own, under another name, in the workflow step's env:"
            )
        raise ValueError(f"{name!r}: every variable but GitHub's tokens reaches these processes anyway; remove it")
    return names


def is_command_file_name(name: str) -> bool:
    return name.upper() in COMMAND_FILE_VARIABLES


def is_secret_name(name: str) -> bool:
    return bool(_SECRET_NAME.search(name))


def secret_values(env: Mapping[str, str] | None = None) -> list[str]:
    """Every form a secret can take in our output (as is, and JSON-escaped), longest first so that a secret
    containing another is masked whole."""
    if env is not None:
        return _secret_forms(env)
    # Every console line passes here: the process environment is only read again after it changed (the forms are
    # remembered per environment and tokens held, the last one only). GitHub's tokens are held out of the
    # environment (core/held_tokens.py) and masked all the same.
    raw, tokens = getattr(os.environ, "_data", None), tuple(held().items())
    if raw is None:
        return _secret_forms({**os.environ, **dict(tokens)})
    return list(_forms_of(tuple(raw.items()), tokens))


@lru_cache(maxsize=1)
def _forms_of(raw: tuple[tuple[bytes, bytes], ...], tokens: tuple[tuple[str, str], ...]) -> tuple[str, ...]:
    """`raw` is the environment as the process holds it (the key of the cache); the forms come from its text."""
    return tuple(_secret_forms({**os.environ, **dict(tokens)}))


def _secret_forms(env: Mapping[str, str]) -> list[str]:
    values: set[str] = set()
    for name, value in env.items():
        value = value.strip()
        if is_secret_name(name) and len(value) >= MIN_SECRET_LENGTH:
            values.add(value)
            values.add(json.dumps(value, ensure_ascii=False)[1:-1])
            values.add(json.dumps(value)[1:-1])
    return sorted(values, key=len, reverse=True)


def redact(text: str, secrets: Iterable[str] | None = None) -> str:
    values = secret_values() if secrets is None else list(secrets)
    text = _replaced(text, values)
    if values and (HIDDEN.search(text) or ESCAPED_HINT.search(text)):
        # A secret split by an escape code or an invisible character (`AIza\x1b[0mSy…`, in a JSON file
        # `AIza\u001b[0mSy…`) reads whole on a terminal or page: masked in the text as printed (core/printable.py),
        # which then replaces the text as written.
        shown = hidden_removed(text)
        if shown != text and (masked := _replaced(shown, values)) != shown:
            return masked
    return text


def _replaced(text: str, secrets: Iterable[str]) -> str:
    for secret in secrets:
        if secret in text:
            text = text.replace(secret, MASK)
    return text


def redact_json(value: object, secrets: list[str] | None = None) -> Any:
    """Every string in a JSON-shaped value (a request body), keys included."""
    secrets = secret_values() if secrets is None else secrets
    if not secrets:
        return value
    if isinstance(value, str):
        return redact(value, secrets)
    if isinstance(value, dict):
        return {redact(k, secrets) if isinstance(k, str) else k: redact_json(v, secrets) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [redact_json(v, secrets) for v in value]
    return value


def child_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment for a process that runs the pull request's code: ours without GitHub's tokens (never
    handed, whatever a config names) and without the runner's command files; `extra` (a `command` target's
    literal `env:`) is added, though never a command file's name."""
    # A token copied under another name (`GH_AUTH: ${{ github.token }}`, a PAT named REVIEW_BOT_PAT) is the same
    # credential: a variable is left out by its value too, whole or inside (a URL with the token in it).
    tokens = [value for value in held().values() if len(value.strip()) >= MIN_SECRET_LENGTH]
    env = {
        k: v
        for k, v in os.environ.items()
        if not is_github_token_name(k) and not any(token.strip() in v for token in tokens)
    }
    env.update(extra or {})
    return {k: v for k, v in env.items() if not is_command_file_name(k)}


def redact_standard_streams() -> None:
    """For a process of ours that does not run through the CLI's entry point (a spawned worker)."""
    if not isinstance(sys.stdout, RedactingStream):
        sys.stdout = RedactingStream(sys.stdout)
    if not isinstance(sys.stderr, RedactingStream):
        sys.stderr = RedactingStream(sys.stderr)


class RedactingStream(io.TextIOBase):
    """A text stream (sys.stdout / sys.stderr) that masks secrets in everything written to it, once control and
    bidirectional characters are out (core/printable.py): a key split by an escape code is masked whole."""

    def __init__(self, inner: TextIO) -> None:
        self._inner = inner

    def write(self, text: str) -> int:
        self._inner.write(redact(printable(text)))
        return len(text)

    def flush(self) -> None:
        self._inner.flush()

    def fileno(self) -> int:
        return self._inner.fileno()

    def isatty(self) -> bool:
        return self._inner.isatty()

    def writable(self) -> bool:
        return True

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return getattr(self._inner, "encoding", "utf-8")

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)
