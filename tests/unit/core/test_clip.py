"""Every cut of shown text masks first (issue 26): a secret placed across the cut, at every offset, leaves no piece
of itself of 6 characters or more, whatever kind of secret (plain, with characters JSON, HTML, markdown or the
workflow commands escape, multi-line) and however the text is cut (from the start, from the end, in the middle, to
a byte budget, or after being joined onto one line)."""

from __future__ import annotations

import json
import os
import string
from collections.abc import Iterator
from contextlib import contextmanager

from hypothesis import given, settings
from hypothesis import strategies as st

from adk_eval_gate.core.clip import clip, clip_end, clip_middle, clip_utf8, masked_lines, single_line
from adk_eval_gate.core.redaction import MASK, MIN_SECRET_LENGTH

SHOWN = 6  # the longest piece of a secret we accept to see: shorter ones are as likely to be any text
FILLER = "x"  # never in a generated secret, so a piece of the secret in the output can only come from the secret
ALPHABET = string.ascii_letters.replace("x", "") + string.digits + '-_*"\\&<>%é#@/:.=+ \n'


def _usable(secret: str) -> bool:
    # the environment's value is stripped; `**` would read as part of the mask `***`
    return secret == secret.strip() and len(secret) >= MIN_SECRET_LENGTH and "**" not in secret


secrets = st.one_of(
    st.text(alphabet=string.ascii_letters.replace("x", "") + string.digits + "-_", min_size=39, max_size=39),
    st.text(alphabet=ALPHABET, min_size=MIN_SECRET_LENGTH, max_size=60),
).filter(_usable)
variable_names = st.sampled_from(["GOOGLE_API_KEY", "INPUT_GITHUB-TOKEN", "MY_DB_PASSWORD", "ShinySecretThing"])
EDGE = settings(max_examples=300, derandomize=True, deadline=None)


@contextmanager
def secret_in_env(name: str, value: str) -> Iterator[None]:
    before = os.environ.get(name)
    os.environ[name] = value
    try:
        yield
    finally:
        if before is None:
            del os.environ[name]
        else:
            os.environ[name] = before


def pieces(secret: str) -> list[str]:
    """Every start and end of the secret from SHOWN characters, as written and as one line."""
    forms = {secret, " ".join(secret.split())}
    return [p for form in forms for k in range(SHOWN, len(form) + 1) for p in (form[:k], form[-k:])]


def assert_no_piece(output: str, secret: str) -> None:
    shown = [p for p in pieces(secret) if p in output]
    assert not shown, f"{shown[0]!r} of {secret!r} survived in {output!r}"


# the forms the redactor knows a value in: as is, and as JSON escapes it (with and without non-ASCII escapes)
forms = st.sampled_from([str, lambda v: json.dumps(v)[1:-1], lambda v: json.dumps(v, ensure_ascii=False)[1:-1]])


@EDGE
@given(
    secrets,
    variable_names,
    forms,
    st.integers(0, 80),
    st.integers(-8, 70),
    st.sampled_from(["…", "", "\n… (cut)"]),
)
def test_a_secret_across_a_cut_from_the_start_leaves_no_piece(secret, name, form, before, into, marker):
    shown = form(secret)
    text = FILLER * before + shown + FILLER * 20
    limit = max(len(marker), before + into)  # the cut falls before, inside or after the secret
    with secret_in_env(name, secret):
        out = clip(text, limit, marker)
    assert len(out) <= limit
    assert_no_piece(out, shown)


@EDGE
@given(secrets, variable_names, st.integers(0, 80), st.integers(-8, 70))
def test_a_secret_across_a_cut_from_the_end_or_the_middle_leaves_no_piece(secret, name, after, into):
    text = FILLER * 20 + secret + FILLER * after
    limit = max(1, after + into)
    with secret_in_env(name, secret):
        kept_end, middle = clip_end(text, limit), clip_middle(text, limit)
    assert len(kept_end) <= limit and len(middle) <= limit
    assert_no_piece(kept_end, secret)
    assert_no_piece(middle, secret)


@EDGE
@given(secrets, variable_names, st.integers(0, 40), st.integers(0, 80))
def test_a_byte_budget_and_a_join_onto_one_line_leave_no_piece(secret, name, before, budget):
    text = "ß" * before + secret + FILLER * 10  # two bytes each: the budget can fall inside a character
    with secret_in_env(name, secret):
        cut = clip_utf8(text, budget)
        joined = clip(single_line(f"line one\n{text}\nline three"), 30 + before)
        lines = masked_lines(text)
    assert len(cut.encode()) <= budget
    assert_no_piece(cut, secret)
    assert_no_piece(joined, secret)
    assert_no_piece("\n".join(lines), secret)


@EDGE
@given(secrets, variable_names, st.integers(SHOWN, 60))
def test_a_piece_a_stream_kept_or_a_text_ends_with_is_masked_at_the_edge(secret, name, size):
    """What `clip_end` gets may itself be the end of a stream (stderr's last bytes): its first characters can be a
    secret's end, which no whole-value masking recognises."""
    size = min(size, len(secret) - 1)
    with secret_in_env(name, secret):
        kept = clip_end(secret[-size:] + " exited", 1000)
        cut = clip(FILLER * 5 + secret[:size] + FILLER * 50, 5 + size, marker="")
    assert kept.startswith(MASK) and kept.endswith(" exited"), kept
    assert_no_piece(kept, secret)
    assert_no_piece(cut, secret)


def test_whole_values_are_masked_in_every_form_and_short_texts_are_left_alone():
    with secret_in_env("GOOGLE_API_KEY", 'AIza"fake\\key-0123456789'):
        assert clip('key AIza"fake\\key-0123456789 end', 100) == "key *** end"
        assert clip('{"k": "AIza\\"fake\\\\key-0123456789"}', 100) == '{"k": "***"}'  # as JSON escapes it
        assert clip("x" * 10, 10) == "x" * 10 and clip("x" * 11, 10) == "x" * 9 + "…"
        assert clip_middle("abcdefghijk", 5) == "ab…jk" and clip_end("abcdefghijk", 5) == "…hijk"
