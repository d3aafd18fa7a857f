"""Text as it may reach a terminal or a log: no control, escape or bidirectional characters (issue #34, item 6).

An agent's text, a metric's error or a case id may carry ESC sequences (colours, cursor moves, an OSC 8 link, a
"clear line" that hides what came before), C0 and C1 controls, NUL, DEL, and the bidirectional overrides,
embeddings, isolates and marks that make text display in another order than it reads (Trojan Source). Every
printer (the console, annotations, progress and log lines: through `core/redaction.py`'s standard streams) and
every runner file (step outputs, the step summary) removes them. Escape sequences go whole, not just their ESC: a
key split by a colour code (`AIza\\x1b[0mSy…`) must read whole once stripped, so the secret masking that follows
sees it. Zero-width characters stay (our own comment breaks links with U+200B); masking looks past them
(`hidden_removed`), so a key split by one (`AIza\\u200bSy…`) is masked all the same.

Tab and newline stay (a log has lines); a carriage return goes (it lets a line overwrite itself on a terminal),
except as part of CRLF, which becomes a newline.
"""

from __future__ import annotations

import re

# ESC sequences whole: CSI (ESC [ params final), OSC and other strings (ESC ] … BEL or ST), then any two-byte ESC
# form; the 8-bit C1 forms (CSI U+009B, OSC U+009D, …) likewise.
_SEQUENCE = re.compile(
    r"(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]?"
    r"|(?:\x1b[\]PX^_]|[\x90\x98\x9d\x9e\x9f])[^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?"
    r"|\x1b[ -~]?"
)
# Controls but tab and newline; DEL and C1; bidirectional marks, embeddings, overrides and isolates.
CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
# Those, and the zero-width characters and byte-order mark that can split a secret without showing.
HIDDEN = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]")
_ZERO_WIDTH = re.compile("[\u200b-\u200d\u2060-\u2064\ufeff]")


def printable(text: str) -> str:
    """`text` without escape sequences, controls (tab and newline kept) or bidirectional characters."""
    if text.isascii() and text.isprintable():
        return text  # the usual case, with no newline or tab: nothing to strip
    return CONTROL.sub("", _SEQUENCE.sub("", text.replace("\r\n", "\n")))


# The same characters as JSON escapes them (`\u001b[0m`, `\u202e`, `\r`), in a file's JSON text; an escaped
# backslash before them (`\\u001b`, a backslash and five letters) is text and stays.
_ESCAPED = re.compile(
    r"(?<!\\)((?:\\\\)*)(?:"
    r"\\u001[bB](?:\[[0-?]*[ -/]*[@-~]?|\][^\"\\]*(?:\\u0007|\\u001[bB]\\\\)?|[ -~])?"
    r"|\\u00(?:0[0-8]|0[bcefBCEF]|1[0-9a-fA-F]|7[fF]|[89][0-9a-fA-F])"
    r"|\\[rbf]"
    r"|\\u(?:061[cC]|200[b-fB-F]|202[a-eA-E]|206[0-46-9]|[fF][eE][fF][fF])"
    r")"
)


# A JSON escape that may stand for one of them: where `hidden_removed` has work to do in a file's text.
ESCAPED_HINT = re.compile(r"\\[urbf]")


def hidden_removed(text: str) -> str:
    """`text` as a secret in it would read (what masking looks at): `printable`, without zero-width characters,
    and without those characters' JSON escapes either (`\\u001b[0m`, `\\u200b`: a JSON file stays the same JSON)."""
    return _ZERO_WIDTH.sub("", printable(_ESCAPED.sub(r"\1", text)))
