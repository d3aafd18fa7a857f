"""Agent text is untrusted: it must not @mention people, inject HTML, or break tables and code fences."""

from __future__ import annotations

import html
import re

from adk_eval_gate.core.redaction import redact

# Control characters, and the bidirectional overrides, embeddings, isolates and marks that make text display in
# another order than it reads (Trojan Source): agent text must look in the comment like what it is.
_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
_MARKDOWN = re.compile(r"([\\`*_\[\]|~#$])")
_MENTION = re.compile(r"@(?=[A-Za-z0-9_-])")


def strip_controls(text: str) -> str:
    """For plain-text output (a CI log): no secrets, no terminal escapes, no reordering (redacted before any cut)."""
    return _CONTROL.sub("", redact(text))


def inline(text: str | None, limit: int = 200) -> str:
    """One line of agent text, safe inside a table cell or a sentence."""
    # Secrets go first: escaping (`_` → `\_`) or a cut at `limit` would hide them from the writers' masking.
    text = _CONTROL.sub("", redact(text or ""))
    text = " ".join(text.split())
    if len(text) > limit:
        text = text[: limit - 1] + "…"
    text = html.escape(text, quote=False)
    text = _MARKDOWN.sub(r"\\\1", text)
    return _MENTION.sub("@\u200b", text)


def html_text(text: str | None, limit: int = 200) -> str:
    """Agent text inside raw HTML (e.g. a <summary> line): GitHub does no markdown there, so HTML-escape only."""
    text = " ".join(_CONTROL.sub("", redact(text or "")).split())
    if len(text) > limit:
        text = text[: limit - 1] + "…"
    return _MENTION.sub("@\u200b", html.escape(text, quote=True))


def code_block(text: str, language: str = "") -> str:
    """A fenced block whose fence is longer than any backtick run inside, so the content cannot close it."""
    text = _CONTROL.sub("", redact(text))
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{language}\n{text}\n{fence}"
