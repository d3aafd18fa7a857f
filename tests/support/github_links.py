"""What github.com would make a link of in a comment: cmark-gfm's own autolinks (cmarkgfm, the renderer GitHub
uses, with its GFM extensions), then a model of github.com's post-processing, which cmarkgfm does not do.

The model follows GitHub's documented rules ("Autolinked references and URLs", "Mentioning people and teams"):
in every text node that is not inside `a`, `code` or `pre` (the elements GitHub's filters skip), an issue or pull
request reference (`#1`, `GH-1`, `owner/repo#1`), a commit (7 to 40 hex digits, `user@sha`, `owner/repo@sha`)
and a mention (`@user`, `@org/team`). It errs on the side of finding links: GitHub needs the issue, commit or
user to exist; the model does not.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser

import cmarkgfm
from cmarkgfm.cmark import Options

SKIPPED = {"a", "code", "pre"}
REFERENCES = {
    "issue": re.compile(r"(?<![\w-])(?:[\w.-]+/[\w.-]+)?#\d+(?!\w)"),
    "GH- issue": re.compile(r"(?<![\w-])GH-\d+(?!\w)", re.IGNORECASE),
    "commit": re.compile(r"(?<![\w-])(?:[\w.-]+(?:/[\w.-]+)?@)?[0-9a-f]{7,40}(?![\w-])", re.IGNORECASE),
    "mention": re.compile(r"(?<![\w`])@[A-Za-z0-9](?:[A-Za-z0-9-]*)(?:/[A-Za-z0-9_.-]+)?"),
}


def render(markdown: str) -> str:
    return cmarkgfm.github_flavored_markdown_to_html(markdown, options=Options.CMARK_OPT_UNSAFE)


class _Texts(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.open: list[str] = []
        self.links: list[str] = []  # hrefs and srcs of the elements the renderer made
        self.texts: list[str] = []  # text nodes GitHub's filters would look at

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in ("a", "img"):
            self.links.append(dict(attrs).get("href") or dict(attrs).get("src") or tag)
        if tag in SKIPPED:
            self.open.append(tag)

    def handle_endtag(self, tag: str) -> None:
        if tag in SKIPPED and tag in self.open:
            self.open.remove(tag)

    def handle_data(self, data: str) -> None:
        if not self.open:
            self.texts.append(data)


def links(markdown: str) -> list[str]:
    """Every link github.com would show for `markdown`: the renderer's `a`/`img` elements, and the references,
    commits and mentions its post-processing would add (`kind: text`)."""
    parser = _Texts()
    parser.feed(render(markdown))
    found = list(parser.links)
    for text in parser.texts:
        for kind, pattern in REFERENCES.items():
            found += [f"{kind}: {m.group()}" for m in pattern.finditer(text)]
    return found


def visible_text(markdown: str) -> str:
    """The text a reader sees, without the zero-width spaces."""
    parser = _Texts()
    parser.feed(render(markdown).replace("<code>", "").replace("</code>", ""))
    return "".join(parser.texts).replace("\u200b", "")
