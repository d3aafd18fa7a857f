"""Agent text is untrusted: it must not @mention people, link to issues, inject HTML, or break tables and fences.

GitHub makes links of text two ways. Its markdown renderer (cmark-gfm) autolinks `http(s)://`, `ftp://` and `www.`
URLs and e-mail addresses (`mailto:`, `xmpp:`); then github.com's post-processing turns references into links:
issues and pull requests (`#1`, `GH-1`, `owner/repo#1`), commits (7 to 40 hex digits, `owner/repo@sha`) and
mentions (`@user`, `@org/team`). A reference to someone else's issue puts a back-link on it, a mention notifies.
Neither pass looks inside code, so fenced blocks are safe as they are; in running text a zero-width space (U+200B)
goes where each pattern needs two characters side by side (after `#`, `GH-` and `@`, before `://` and after
`www`, and every 6 hex digits of a longer run): the text reads the same and nothing matches. This is the
technique bots that quote other people's text on GitHub rely on (Renovate, Dependabot), and GitHub's sanitizer
keeps the character. Markdown links and images cannot form because `[` and `]` are escaped, raw HTML because it
is HTML-escaped.
"""

from __future__ import annotations

import html
import re

from adk_eval_gate.core.clip import clip, clip_words, single_line
from adk_eval_gate.core.printable import printable
from adk_eval_gate.core.redaction import redact

_MARKDOWN = re.compile(r"([\\`*_\[\]|~#$])")
_BREAK = "\u200b"
# A zero-width space at each of these positions (see the module's docstring), each rule tried only when its
# trigger is in the text (most cells have none): @user, @org/team, user@sha and e-mail addresses; #1 and
# owner/repo#1; GH-1; scheme://; www.
_JOINTS = (
    ("@", re.compile(r"(?<=@)(?=[A-Za-z0-9_-])")),
    ("#", re.compile(r"(?<=#)(?=\d)")),
    ("-", re.compile(r"(?<=\b[Gg][Hh]-)(?=\d)")),
    ("://", re.compile(r"(?=://)")),
    (".", re.compile(r"(?<=\b[Ww]{3})(?=\.)")),
)
_HEX_RUN = re.compile(r"(?<![A-Za-z0-9_])[0-9A-Fa-f]{7,}(?![A-Za-z0-9_])")
_HEX_CHUNK = 6  # GitHub links 7 hex digits or more as a commit


def unlinked(text: str) -> str:
    """`text` as it reads, with nothing GitHub would make a link, reference or mention of."""
    text = _HEX_RUN.sub(lambda m: _BREAK.join(re.findall(f".{{1,{_HEX_CHUNK}}}", m.group())), text)
    for trigger, joint in _JOINTS:
        if trigger in text:
            text = joint.sub(_BREAK, text)
    return text


def strip_controls(text: str) -> str:
    """For plain-text output (a CI log): no secrets, no terminal escapes, no reordering (redacted before any cut)."""
    return redact(printable(text))


def inline(text: str | None, limit: int = 200) -> str:
    """One line of agent text, safe inside a table cell or a sentence."""
    # Secrets go first (in `single_line` and `clip`), once control characters are out (an agent cannot hide a
    # secret from the masking by splitting it with them): escaping (`_` → `\_`) or a cut at `limit` would hide
    # them from the writers' masking.
    text = clip_words(single_line(printable(text or "")), limit)  # a sentence cut keeps its words whole
    text = html.escape(text, quote=False)
    text = _MARKDOWN.sub(r"\\\1", text)
    return unlinked(text)


def html_text(text: str | None, limit: int = 200) -> str:
    """Agent text inside raw HTML (e.g. a <summary> line): GitHub does no markdown there, so HTML-escape only."""
    text = clip(single_line(printable(text or "")), limit)
    return unlinked(html.escape(text, quote=True))


def code_block(text: str, language: str = "") -> str:
    """A fenced block whose fence is longer than any backtick run inside, so the content cannot close it."""
    text = redact(printable(text))
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{language}\n{text}\n{fence}"
