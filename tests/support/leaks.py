"""What a leaked secret looks like in what we write: any piece of it from SHOWN characters up, in every form an
output holds text (as is, JSON-escaped, HTML- or XML-escaped, markdown-escaped, as a workflow command escapes it,
joined onto one line). Zero-width spaces are taken out first: the comment puts them inside long hex runs."""

from __future__ import annotations

import html
import json
import re

SHOWN = 6  # shorter pieces are as likely to be any text


def _forms(text: str) -> set[str]:
    escaped = html.escape(text, quote=False)
    return {
        text,
        json.dumps(text)[1:-1],
        json.dumps(text, ensure_ascii=False)[1:-1],
        escaped,
        html.escape(text, quote=True),
        re.sub(r"([\\`*_\[\]|~#$])", r"\\\1", escaped),
        text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A"),
        html.escape(text, quote=True).replace("\n", "&#10;"),
    }


def pieces(secret: str) -> set[str]:
    """Every start and every end of the secret from SHOWN characters, in every form."""
    whole = {secret, " ".join(secret.split())}
    return {
        form
        for value in whole
        for k in range(SHOWN, len(value) + 1)
        for p in (value[:k], value[-k:])
        for form in _forms(p)
    }


def leaks(text: str, secret: str) -> list[str]:
    """The longest pieces of `secret` found in `text` (empty when none)."""
    text = text.replace("\u200b", "")
    found = sorted((p for p in pieces(secret) if p in text), key=len, reverse=True)
    return found[:3]


def readable(path) -> str:
    """A file's text as a reader could get it: report.html's inline data is packed (compressed), so its unpacked
    data is added — a secret hidden by compression is still a leak."""
    from pathlib import Path

    from adk_eval_gate.report.html import embedded_data

    text = Path(path).read_text(errors="replace")
    if Path(path).suffix == ".html":
        text += "\n" + json.dumps(embedded_data(text), ensure_ascii=False)
    return text
