"""A JSON document's values with their places in the text, and a patch that rewrites only changed values.

Golden updates must leave a user's eval file as they wrote it: layout, key order, indentation, every untouched
case byte for byte. So a new document is never dumped whole: it is compared with the old one value by value, and
only a value that changed is re-serialised, in the style the file already uses around it (its indentation unit
and the indentation of the line it sits on; on one line when it was written on one line).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from adk_eval_gate.core.json_types import JsonObject

_SPACE = " \t\n\r"
_NUMBER = re.compile(r"-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][-+]?\d+)?")
_LITERALS = ("true", "false", "null")
_DECODER = json.JSONDecoder()


def _string_end(text: str, at: int) -> int:
    """Where the string starting at `at` (its opening quote) ends."""
    value, end = _DECODER.raw_decode(text, at)
    if not isinstance(value, str):
        raise SpanError(f"expected a string at offset {at}")
    return end


class SpanError(ValueError):
    """The text is not the JSON it was expected to be (or nests past what can be walked)."""


@dataclass(frozen=True)
class Member:
    key: str
    key_start: int
    key_end: int
    value: Node


@dataclass(frozen=True)
class Node:
    start: int
    end: int
    members: tuple[Member, ...] = ()
    items: tuple[Node, ...] = ()
    kind: str = "scalar"  # "object", "array" or "scalar"


@dataclass(frozen=True)
class Style:
    indent: str | None  # None: the file is written on one line
    item_sep: str
    key_sep: str
    ensure_ascii: bool
    newline: str = "\n"


def _skip(text: str, at: int) -> int:
    while at < len(text) and text[at] in _SPACE:
        at += 1
    return at


def _expect(text: str, at: int, char: str) -> int:
    if at >= len(text) or text[at] != char:
        raise SpanError(f"expected {char!r} at offset {at}")
    return at + 1


def _value(text: str, at: int) -> Node:
    at = _skip(text, at)
    if at >= len(text):
        raise SpanError("unexpected end of JSON")
    char = text[at]
    if char == "{":
        return _object(text, at)
    if char == "[":
        return _array(text, at)
    if char == '"':
        return Node(at, _string_end(text, at))
    for literal in _LITERALS:
        if text.startswith(literal, at):
            return Node(at, at + len(literal))
    match = _NUMBER.match(text, at)
    if match is None:
        raise SpanError(f"unexpected {char!r} at offset {at}")
    return Node(at, match.end())


def _object(text: str, start: int) -> Node:
    members: list[Member] = []
    at = _skip(text, start + 1)
    if at < len(text) and text[at] == "}":
        return Node(start, at + 1, kind="object")
    while True:
        at = _skip(text, at)
        if at >= len(text) or text[at] != '"':
            raise SpanError(f"expected a key at offset {at}")
        key_end = _string_end(text, at)
        key = json.loads(text[at:key_end])
        colon = _expect(text, _skip(text, key_end), ":")
        value = _value(text, colon)
        members.append(Member(key, at, key_end, value))
        at = _skip(text, value.end)
        if at < len(text) and text[at] == ",":
            at += 1
            continue
        end = _expect(text, at, "}")
        return Node(start, end, members=tuple(members), kind="object")


def _array(text: str, start: int) -> Node:
    items: list[Node] = []
    at = _skip(text, start + 1)
    if at < len(text) and text[at] == "]":
        return Node(start, at + 1, kind="array")
    while True:
        item = _value(text, at)
        items.append(item)
        at = _skip(text, item.end)
        if at < len(text) and text[at] == ",":
            at += 1
            continue
        end = _expect(text, at, "]")
        return Node(start, end, items=tuple(items), kind="array")


def parse_spans(text: str) -> Node:
    """The document's tree of spans; the text must already be valid JSON (json.loads said so)."""
    try:
        return _value(text, 0)
    except RecursionError:
        raise SpanError("nested too deeply") from None


def detect_style(text: str) -> Style:
    """The indentation unit is the smallest indentation of any line; tabs when lines are indented with tabs."""
    indents = [m.group(1) for m in re.finditer(r"\n([ \t]+)\S", text)]
    ensure_ascii = not any(ord(c) > 127 for c in text) and re.search(r"\\u[0-9a-fA-F]{4}", text) is not None
    item_sep = ", " if re.search(r",[ ][\"\[{\d\-tfn]", text) else ","
    key_sep = ": " if re.search(r'":\s', text) else ":"
    newline = "\r\n" if "\r\n" in text else "\n"
    if not indents:
        return Style(None, item_sep, key_sep, ensure_ascii, newline)
    unit = "\t" if indents[0].startswith("\t") else " " * min(len(i) for i in indents if not i.startswith("\t"))
    return Style(unit or "  ", ",", key_sep, ensure_ascii, newline)


def _line_indent(text: str, at: int) -> str:
    line_start = text.rfind("\n", 0, at) + 1
    return re.match(r"[ \t]*", text[line_start:]).group(0)  # type: ignore[union-attr]


def render(value: object, style: Style, line_indent: str, inline: bool, like: str = "") -> str:
    """`like`: the text being replaced, whose spacing an inline value copies (`{"a": 1}` or `{"a":1}`)."""
    if inline or style.indent is None:
        item_sep = "," if re.search(r",\S", like) and ", " not in like else ", "
        key_sep = ":" if re.search(r'":\S', like) and '": ' not in like else ": "
        separators = (style.item_sep, style.key_sep) if style.indent is None else (item_sep, key_sep)
        return json.dumps(value, separators=separators, ensure_ascii=style.ensure_ascii)
    dumped = json.dumps(value, indent=style.indent, separators=(",", style.key_sep), ensure_ascii=style.ensure_ascii)
    return dumped.replace("\n", style.newline + line_indent)  # raw newlines are structure: string newlines are escaped


def _same(old: object, new: object) -> bool:
    return json.dumps(old) == json.dumps(new)


@dataclass(frozen=True)
class _Edit:
    start: int
    end: int
    text: str


def _replace(text: str, node: Node, new: object, style: Style) -> _Edit:
    single_line = "\n" not in text[node.start : node.end]
    empty = node.kind != "scalar" and not (node.members or node.items)
    inline = single_line and not empty and (node.kind != "scalar" or not isinstance(new, (dict, list)))
    old_text = text[node.start : node.end]
    return _Edit(node.start, node.end, render(new, style, _line_indent(text, node.start), inline, old_text))


def _gap(text: str, node: Node, before: int, last: int, count: int, inline: bool, style: Style) -> str:
    """What goes between a new item's comma and the item: the same as before the last item; with one item on
    one line (`[x]`), the space the file puts after its commas elsewhere."""
    gap = text[before:last].lstrip(",")
    if count > 1 or not inline:
        return gap
    local = text[node.start : node.end]
    spaced = ", " in local if "," in local else (style.indent is not None or style.item_sep == ", ")
    return " " if spaced else ""


def _object_edits(text: str, node: Node, old: JsonObject, new: JsonObject, style: Style) -> list[_Edit]:
    by_key = {m.key: m for m in node.members}
    gone = [k for k in old if k not in new]
    added = [k for k in new if k not in old]
    if len(by_key) != len(node.members) or len(gone) > 1 or (gone and added) or not node.members:
        return [_replace(text, node, new, style)]
    edits: list[_Edit] = []
    for key in old:
        if key in new and not _same(old[key], new[key]):
            edits += _edits(text, by_key[key].value, old[key], new[key], style)
    members = node.members
    if gone:
        index = next(i for i, m in enumerate(members) if m.key == gone[0])
        if index > 0:
            edits.append(_Edit(members[index - 1].value.end, members[index].value.end, ""))
        elif len(members) > 1:
            edits.append(_Edit(members[0].key_start, members[1].key_start, ""))
        else:
            return [_replace(text, node, new, style)]
    if added:
        last = members[-1]
        before = members[-2].value.end if len(members) > 1 else node.start + 1
        inline = "\n" not in text[node.start : node.end]
        gap = _gap(text, node, before, last.key_start, len(members), inline, style)
        key_sep = text[last.key_end : last.value.start]
        indent = _line_indent(text, last.key_start)
        added_text = "".join(
            f",{gap}{json.dumps(k, ensure_ascii=style.ensure_ascii)}{key_sep}{render(new[k], style, indent, inline)}"
            for k in added
        )
        edits.append(_Edit(last.value.end, last.value.end, added_text))
    return edits


def _edits(text: str, node: Node, old: object, new: object, style: Style) -> list[_Edit]:
    if _same(old, new):
        return []
    if isinstance(old, dict) and isinstance(new, dict) and node.kind == "object":
        return _object_edits(text, node, old, new, style)
    if isinstance(old, list) and isinstance(new, list) and node.kind == "array" and len(old) == len(new) and old:
        return [e for item, a, b in zip(node.items, old, new, strict=True) for e in _edits(text, item, a, b, style)]
    if isinstance(old, list) and isinstance(new, list) and node.kind == "array" and old and len(new) > len(old):
        return _appended(text, node, old, new, style)
    return [_replace(text, node, new, style)]


def _appended(text: str, node: Node, old: list[Any], new: list[Any], style: Style) -> list[_Edit]:
    """New items after the old ones (a case added to an eval set): written after the last item, separated from it
    as the last two items are separated (or as the first item is from `[`)."""
    kept = new[: len(old)]
    edits = [e for item, a, b in zip(node.items, old, kept, strict=True) for e in _edits(text, item, a, b, style)]
    last = node.items[-1]
    before = node.items[-2].end if len(node.items) > 1 else node.start + 1
    inline = "\n" not in text[node.start : node.end]
    gap = _gap(text, node, before, last.start, len(node.items), inline, style)
    indent = _line_indent(text, last.start)
    added = "".join(f",{gap}{render(item, style, indent, inline)}" for item in new[len(old) :])
    return [*edits, _Edit(last.end, last.end, added)]


def patch(text: str, old: object, new: object) -> str:
    """`text` (the JSON of `old`) rewritten to hold `new`, changing only the text of values that differ."""
    if not _same(json.loads(text), old):
        raise SpanError("the text does not hold the old document")
    root = parse_spans(text)
    edits = sorted(_edits(text, root, old, new, detect_style(text)), key=lambda e: (e.start, e.end))
    pieces: list[str] = []
    at = 0
    for edit in edits:
        if edit.start < at:
            raise SpanError("overlapping edits")
        pieces += [text[at : edit.start], edit.text]
        at = edit.end
    pieces.append(text[at:])
    patched = "".join(pieces)
    if not _same(json.loads(patched), new):  # the patch must say exactly what was meant, or nothing is written
        raise SpanError("the patched text does not hold the new document")
    return patched
