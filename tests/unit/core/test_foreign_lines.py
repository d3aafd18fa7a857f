"""Lines of the pull request's code made inert for the runner (core/foreign_lines.py)."""

from __future__ import annotations

import os

import pytest

from adk_eval_gate.core.foreign_lines import forward_lines, inert


@pytest.mark.parametrize(
    "line",
    [
        "::set-output name=passed::true",
        "   ::stop-commands::abc",
        "\t::error file=a.py::boom",
        "\u00a0::add-mask::x",
        "::save-state name=x::y",
    ],
)
def test_a_line_the_runner_would_read_as_a_command_is_not_one(line):
    made = inert(line + "\n")
    assert not made.strip().startswith("::") and line.strip() in made


def test_the_old_syntax_anywhere_in_a_line_is_broken():
    assert "##[" not in inert("text ##[error]spoof\n")


def test_ordinary_text_is_untouched():
    for text in ("hello world\n", "a :: b\n", "time 10::30\n", ""):
        assert inert(text) == text


def test_forwarded_lines_are_inert_and_whole():
    read, write = os.pipe()
    got: list[str] = []
    with os.fdopen(write, "wb") as out:
        out.write(b"one\n::set-output name=x::y\n" + b"z" * 100 + b"\n")
    forward_lines(os.fdopen(read, "rb"), got.append).join(5)
    text = "".join(got)
    assert text.startswith("one\n") and "\n::set-output" not in text and "z" * 100 in text
