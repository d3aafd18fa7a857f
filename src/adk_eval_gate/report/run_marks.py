"""Which run a file of an output folder belongs to, so no command combines files of different runs.

results.json and comparison.json carry the run's `run_id` as a field; report.md and junit.xml a comment at their
end (invisible in the rendered comment, skipped by JUnit readers), report.html a `<meta>`. A command that writes a
run's results removes what is left of another run beside them (`remove_stale`); `view` pairs a results file only
with the comparison of the same run; `merge` takes shards of one workflow run (docs/report-html.md).
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

MARKDOWN = "<!-- adk-eval-gate run: {} -->"
_MARKED = re.compile(
    r"<!-- adk-eval-gate run: ([\w.-]*) -->"
    r'|<meta name="adk-eval-gate-run" content="([\w.-]*)">'
)
_OURS = {  # how a file written by us without a run mark (an earlier version) is still known as ours
    "report.md": "adk-eval-gate",  # in its heading (the first line): see `_ours`
    "report.html": 'id="adk-eval-gate-data"',
    "junit.xml": '<testsuites name="adk-eval-gate"',
    "comparison.json": '"verdict"',
    "pull-request.json": '"comment_key"',
}
REPORT_FILES = tuple(_OURS)  # written from a run's results: what another run's results make stale
_READ_AT_MOST = 1 << 16  # marks sit at the top (the HTML's head) or the end (markdown): both ends are read


def mark_markdown(text: str, run_id: str | None) -> str:
    return f"{text.rstrip()}\n\n{MARKDOWN.format(run_id)}\n" if run_id else text


def mark_html(page: str, run_id: str | None) -> str:
    if not run_id:
        return page
    meta = f'<meta name="adk-eval-gate-run" content="{html.escape(run_id)}">\n'
    return page.replace('<meta charset="utf-8">\n', f'<meta charset="utf-8">\n{meta}', 1)


def mark_junit(xml: str, run_id: str | None) -> str:
    """A comment after the root element: every JUnit reader skips it (a <properties> element under <testsuites>
    is not in every reader's schema)."""
    return f"{xml.rstrip()}\n{MARKDOWN.format(run_id)}\n" if run_id else xml


@dataclass(frozen=True)
class Mark:
    ours: bool  # written by adk-eval-gate (else: someone's own file of that name, never touched)
    run_id: str | None


def mark_of(path: Path) -> Mark:
    """What `path` says of its run; a file we cannot read is not ours."""
    try:
        with path.open("rb") as stream:
            head = stream.read(_READ_AT_MOST)
            stream.seek(0, 2)
            size = stream.tell()
            stream.seek(max(size - _READ_AT_MOST, len(head)))
            text = (head + stream.read()).decode("utf-8", "replace")
    except OSError:
        return Mark(False, None)
    if path.name == "comparison.json":
        return _json_mark(text, "run_id", "verdict")
    if path.name == "pull-request.json":
        return _json_mark(text, "results_run_id", "comment_key")
    if match := _MARKED.search(text):
        return Mark(True, next(group for group in match.groups() if group is not None))
    return Mark(_ours(path.name, text), None)


def _ours(name: str, text: str) -> bool:
    """An unmarked file of an earlier version, known by what only ours hold; a report.md by its heading, since a
    user's own notes may well mention adk-eval-gate."""
    if name == "report.md":
        first = (text.lstrip().splitlines() or [""])[0]
        return first.startswith("#") and _OURS[name] in first
    return _OURS.get(name, "\0") in text


def _json_mark(text: str, field: str, ours: str) -> Mark:
    try:
        data = json.loads(text)
    except ValueError:
        return Mark(False, None)
    if not isinstance(data, dict) or ours not in data:
        return Mark(False, None)
    run_id = data.get(field)
    return Mark(True, run_id if isinstance(run_id, str) else None)


def remove_stale(folder: Path, run_id: str | None, names: Iterable[str] = REPORT_FILES) -> list[str]:
    """Removes the files of `names` in `folder` that we wrote for another run (or for no run we can name) than
    `run_id`; what they were, to say so. Someone's own file of the same name is left alone."""
    removed = []
    for name in names:
        path = folder / name
        if not path.is_file():
            continue
        mark = mark_of(path)
        if mark.ours and (run_id is None or mark.run_id != run_id):
            path.unlink(missing_ok=True)
            removed.append(name)
    return removed
