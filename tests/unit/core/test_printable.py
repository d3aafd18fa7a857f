"""core/printable.py and the masking that looks past hidden characters (issue #34, item 6)."""

from __future__ import annotations

import json

import pytest

from adk_eval_gate.core.clip import clip, last_line, short_sha
from adk_eval_gate.core.printable import printable
from adk_eval_gate.core.redaction import redact

KEY = "AIzaQxZvWqJkXyPfQzVbNmKjHgQwZxCvBnMkLpRt"


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("red \x1b[31mtext\x1b[0m", "red text"),
        ("a \x1b]8;;http://evil\x07link\x1b]8;;\x07 b", "a link b"),
        ("a \x1b]0;title\x1b\\ b", "a  b"),
        ("8-bit \x9b31mcsi", "8-bit csi"),
        ("\u202eevil\u202c \u2066x\u2069 \u200e\u200f\u061c", "evil x "),
        ("nul\x00 del\x7f bell\x07 back\x08", "nul del bell back"),
        ("line\r\nnext\rover\ttab", "line\nnextover\ttab"),
        ("#\u200b1 stays", "#\u200b1 stays"),  # our own zero-width space, which keeps agent text from linking
        ("plain ascii", "plain ascii"),
    ],
)
def test_printable_removes_what_a_terminal_would_act_on(text, shown):
    assert printable(text) == shown


@pytest.mark.parametrize("split", ["\x1b[0m", "\u200b", "\u202e", "\x00", "\x1b]8;;x\x07"])
def test_a_secret_split_by_a_hidden_character_is_masked_as_text_and_as_json(split):
    text = f"before {KEY[:4]}{split}{KEY[4:]} after"
    assert redact(text, [KEY]) == "before *** after"
    for ascii_only in (True, False):
        dumped = json.dumps({"reason": text}, ensure_ascii=ascii_only)
        masked = redact(dumped, [KEY])
        assert json.loads(masked) == {"reason": "before *** after"}, masked


def test_text_without_a_secret_keeps_its_characters_and_json_its_escapes():
    text = json.dumps({"a": "x\x1b[0my \\u001b literal"})
    assert redact(text, [KEY]) == text
    assert redact("x\x1b[0my", [KEY]) == "x\x1b[0my"


def test_cuts_strip_before_they_mask(monkeypatch):
    monkeypatch.setenv("GOOGLE_API_KEY", KEY)
    split = KEY[:4] + "\x1b[0m" + KEY[4:]
    assert clip("x" * 280 + split + " tail", 300).count("***") == 1
    crash = "Traceback\n" + "boom " + "y" * 280 + KEY + " more\n"
    line = last_line(crash, 300)
    assert KEY[:4] not in line.replace("***", "") and line.startswith("boom ") and "***" in line
    assert short_sha(KEY) == "***"
