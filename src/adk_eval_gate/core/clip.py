"""Text shortened only after its secrets are masked: every cut, shortening or split of text we show goes here.

A cut made before masking hides a secret from it: `redact` looks for whole values, so the first 20 characters of
a 38-character key, left at the end of a 300-character error line, pass every writer's masking. So each helper
masks first (`redact`, the values of the environment's secret-bearing variables in every form it knows), then
cuts, then looks at the edge it cut: a text that still ends (or, kept from its end, starts) with a piece of a
secret, of any length from `PARTIAL` characters up, loses that piece to the mask. The second step matters where
the whole text was never seen, such as the last bytes of a stream (`clip_end`). Escape sequences and controls go
before the mask (`_masked`): shown text needs none of them, and a secret split by one is only recognisable once
they are out.
"""

from __future__ import annotations

from collections.abc import Sequence

from adk_eval_gate.core.printable import printable
from adk_eval_gate.core.redaction import MASK, redact, secret_values

# The shortest piece of a secret worth masking at an edge: shorter ones are as likely to be ordinary text.
PARTIAL = 4


def _masked(text: str, secrets: Sequence[str] | None = None) -> str:
    """Stripped of escape sequences and controls (core/printable.py), then masked: a key split by a colour code
    (`AIza\\x1b[0mSy…`) is whole when masked, and no piece of it at a cut's edge hides behind one."""
    return redact(printable(text), secrets)


def single_line(text: str) -> str:
    """Masked, then on one line: a secret that spans lines (a PEM key) is only recognisable before the join."""
    return " ".join(_masked(text).split())


def masked_lines(text: str) -> list[str]:
    """The lines of `text`, masked before the split, which would otherwise cut a multi-line secret apart."""
    return _masked(text).splitlines()


def masked_split(text: str, separator: str, maxsplit: int = -1) -> list[str]:
    """The parts of masked `text`: a split of a secret (a URL with a password holds `:`) would hide it from the mask."""
    return _masked(text).split(separator, maxsplit)


def first_line(text: str, limit: int, default: str = "") -> str:
    """The first non-empty line of masked `text` (an exception's message), clipped to `limit` characters."""
    lines = [line.strip() for line in masked_lines(text) if line.strip()]
    return clip(lines[0], limit) if lines else default


def last_line(text: str, limit: int, default: str = "") -> str:
    """The last non-empty line of masked `text` (a crashed process's stderr), clipped to `limit` characters."""
    lines = [line.strip() for line in masked_lines(text) if line.strip()]
    return clip(lines[-1], limit) if lines else default


def short_sha(sha: str | None, default: str = "") -> str:
    """A commit's first 12 characters, as a clip: a stored `sha` field is not always a sha (a forged file's)."""
    return clip(sha, 12, marker="") if sha else default


def clip(text: str, limit: int, marker: str = "…") -> str:
    """At most `limit` characters of masked `text`, from its start; `marker` (counted in `limit`) ends a cut."""
    secrets = secret_values()
    text = _masked(text, secrets)
    if len(text) <= limit:
        return text
    head = _without_partial_end(text[: max(0, limit - len(marker))], secrets)
    return head + marker


def clip_end(text: str, limit: int, marker: str = "…") -> str:
    """At most `limit` characters of masked `text`, from its end (the last lines of a log)."""
    secrets = secret_values()
    text = _masked(text, secrets)
    if len(text) <= limit:
        return _without_partial_start(text, secrets)
    keep = max(0, limit - len(marker))
    return marker + _without_partial_start(text[len(text) - keep :] if keep else "", secrets)


def clip_middle(text: str, limit: int, marker: str = "…") -> str:
    """Both ends of masked `text` (case ids that share a long prefix differ at the end)."""
    secrets = secret_values()
    text = _masked(text, secrets)
    if len(text) <= limit:
        return text
    room = max(0, limit - len(marker))
    head, tail = room // 2, room - room // 2
    return (
        _without_partial_end(text[:head], secrets)
        + marker
        + _without_partial_start(text[len(text) - tail :] if tail else "", secrets)
    )


def clip_utf8(text: str, max_bytes: int) -> str:
    """Masked `text` whose UTF-8 encoding takes at most `max_bytes` bytes (a file with a size limit)."""
    secrets = secret_values()
    text = _masked(text, secrets)
    data = text.encode()
    if len(data) <= max_bytes:
        return text
    return _without_partial_end(data[:max_bytes].decode(errors="ignore"), secrets)


def _without_partial_end(head: str, secrets: Sequence[str]) -> str:
    """`head` without a trailing start of a secret (the rest of which the cut removed)."""
    for secret in secrets:
        for size in range(min(len(secret) - 1, len(head)), PARTIAL - 1, -1):
            if head.endswith(secret[:size]):
                return head[:-size] + MASK
    return head


def _without_partial_start(tail: str, secrets: Sequence[str]) -> str:
    """`tail` without a leading end of a secret (the rest of which was before the cut)."""
    for secret in secrets:
        for size in range(min(len(secret) - 1, len(tail)), PARTIAL - 1, -1):
            if tail.startswith(secret[-size:]):
                return MASK + tail[size:]
    return tail


def clip_words(text: str, limit: int, marker: str = "…") -> str:
    """`clip`, cut at a word boundary where one is near: a line a person reads never ends mid-word. The cut is
    made by `clip` (masked first, a partial secret at the edge masked), then backed off to the last space when
    that keeps at least half the room."""
    cut = clip(text, limit, marker)
    if len(redact(text)) <= limit or not cut.endswith(marker):
        return cut
    head = cut[: len(cut) - len(marker)]
    space = head.rfind(" ")
    if space >= (limit - len(marker)) // 2:
        head = head[:space].rstrip(" ,;:(—-")
    return head + marker
