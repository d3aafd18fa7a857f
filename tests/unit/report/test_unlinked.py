"""Nothing from an agent makes a live reference, mention or link in the comment (issue 26): each class GitHub links
— issue and pull request references, commits, mentions, URL and e-mail autolinks, markdown links and images — is
found by GitHub's renderer (cmarkgfm) and a model of github.com's post-processing when written as is, and is not
once it went through `inline` (markdown) or `html_text` (raw HTML), while the reader still sees the same text."""

from __future__ import annotations

import html

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from adk_eval_gate.report.escape import code_block, html_text, inline, unlinked
from tests.support.github_links import links, visible_text

HAZARDS = {
    "issue": ["#1", "#26", "(#123)", "fixes #4."],
    "cross-repository issue": ["owner/repo#1", "google/adk-python#1234", "o.r/x_y#9"],
    "GH- issue": ["GH-1", "gh-42", "(GH-7)"],
    "commit": ["a5c3785ed8d6a35868bc169f07e40e889087fd2e", "deadbee", "1234567", "ABCDEF0123"],
    "user@commit": ["octocat@a5c3785", "owner/repo@a5c3785ed8d6a35868bc169f07e40e889087fd2e"],
    "mention": ["@octocat", "@google/adk-team", "@github-actions", "cc @a-b."],
    "URL": ["https://github.com/o/r/issues/1", "http://evil.example/x?y=1&z=2", "HTTPS://X.COM", "ftp://h.io/f"],
    "www": ["www.example.com", "see www.github.com/o/r/pull/2"],
    "e-mail": ["someone@example.com", "mailto:a@b.co", "xmpp:me@chat.example/x"],
    "markdown link": ["[click](https://evil.example)", "![img](https://evil.example/p.png)", "<https://e.com>"],
    "raw HTML": ['<a href="https://evil.example">x</a>', '<img src="https://evil.example/p.png">'],
}
EVERY = [token for tokens in HAZARDS.values() for token in tokens]


@pytest.mark.parametrize("kind", list(HAZARDS))
def test_each_class_links_as_is_and_not_once_escaped(kind):
    for token in HAZARDS[kind]:
        text = f"the agent said {token} here"
        assert links(text), f"the model misses {kind} {token!r}: the test would prove nothing"
        cell = f"| case | why |\n|---|---|\n| x | {inline(text, 500)} |\n"
        assert links(cell) == [], (kind, token, inline(text, 500))
        summary = f"<details><summary>{html_text(text, 500)}</summary>\n\nbody\n\n</details>\n"
        assert links(summary) == [], (kind, token, html_text(text, 500))


def test_the_reader_sees_the_same_text():
    text = "fixed #1 and GH-2 in owner/repo#3 at a5c3785ed8d6 for @octocat, see https://x.io/a or www.y.com"
    assert visible_text(inline(text, 500)).strip() == text
    assert html.unescape(html_text(text, 500)).replace("\u200b", "") == text
    # only invisible characters were added, where each pattern needs two characters side by side
    assert unlinked("#1 GH-2 @me a@b.co https://x www.y 0123456789abcdef") == (
        "#\u200b1 GH-\u200b2 @\u200bme a@\u200bb.co https\u200b://x www\u200b.y 012345\u200b6789ab\u200bcdef"
    )


def test_code_blocks_are_left_as_they_are():
    """GitHub links nothing inside code: the evidence blocks keep agent text exactly, to be copied."""
    block = code_block("see #1, @octocat, a5c3785ed8d6a35868bc169f07e40e889087fd2e and https://x.io")
    assert "\u200b" not in block and links(block) == []


separators = st.sampled_from([" ", "", "(", ")", ",", ".", ":", "/", "\n", "|", "-", "_", "`", "*", "\\", "'", '"'])
words = st.one_of(st.sampled_from(EVERY), st.text(alphabet="abcdef0123456789#@GHw./:-", max_size=12))


@settings(max_examples=300, derandomize=True, deadline=None)
@given(st.lists(st.tuples(words, separators), max_size=8))
def test_no_mix_of_hazards_makes_a_link(parts):
    text = "".join(word + separator for word, separator in parts)
    cell = f"| case | why |\n|---|---|\n| x | {inline(text, 2000)} |\n"
    paragraph = f"**why**: {inline(text, 2000)}\n"
    summary = f"<details><summary>{html_text(text, 2000)}</summary>\n\nbody\n\n</details>\n"
    assert links(cell) == [] and links(paragraph) == [] and links(summary) == [], text
