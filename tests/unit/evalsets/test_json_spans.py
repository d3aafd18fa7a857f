"""The in-place JSON patch: only changed values are rewritten, each in the style around it."""

from __future__ import annotations

import copy
import json

import pytest

from adk_eval_gate.evalsets.json_spans import SpanError, detect_style, parse_spans, patch


def _patched(text: str, change) -> str:
    old = json.loads(text)
    new = copy.deepcopy(old)
    change(new)
    result = patch(text, old, new)
    assert json.loads(result) == new
    return result


def test_a_changed_string_is_the_only_change():
    text = '{\n  "b": 1,\n  "a": {"x": "old", "y": [1,2]},\n  "c": "same"\n}\n'
    result = _patched(text, lambda d: d["a"].__setitem__("x", "new"))
    assert result == text.replace('"old"', '"new"')


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{\n    "k": [\n        1\n    ]\n}', '{\n    "k": [\n        {\n            "z": 2\n        }\n    ]\n}'),
        ('{\n\t"k": [\n\t\t1\n\t]\n}', '{\n\t"k": [\n\t\t{\n\t\t\t"z": 2\n\t\t}\n\t]\n}'),
        ('{"k": [1]}', '{"k": [{"z": 2}]}'),
        ('{"k":[1]}', '{"k":[{"z":2}]}'),
        ('{\r\n  "k": [\r\n    1\r\n  ]\r\n}\r\n', '{\r\n  "k": [\r\n    {\r\n      "z": 2\r\n    }\r\n  ]\r\n}\r\n'),
    ],
)
def test_a_replaced_value_takes_the_files_indentation_and_line_ends(text, expected):
    assert _patched(text, lambda d: d["k"].__setitem__(0, {"z": 2})) == expected


def test_a_new_key_follows_the_last_member_as_its_siblings_are_separated():
    text = '{\n  "a": 1,\n  "b": {\n    "c": 2\n  }\n}'
    assert _patched(text, lambda d: d["b"].__setitem__("d", [3])) == (
        '{\n  "a": 1,\n  "b": {\n    "c": 2,\n    "d": [\n      3\n    ]\n  }\n}'
    )


def test_a_removed_key_takes_its_separator_with_it():
    text = '{"a": 1, "b": 2, "c": 3}'
    assert _patched(text, lambda d: d.pop("b")) == '{"a": 1, "c": 3}'
    assert _patched(text, lambda d: d.pop("a")) == '{"b": 2, "c": 3}'


def test_an_appended_item_is_separated_like_the_items_before_it():
    text = '[\n  {"a": 1},\n  {"a": 2}\n]\n'
    assert _patched(text, lambda d: d.append({"a": 3})) == '[\n  {"a": 1},\n  {"a": 2},\n  {\n    "a": 3\n  }\n]\n'


def test_non_ascii_is_written_as_the_file_writes_it():
    assert _patched('{"a": "é"}', lambda d: d.__setitem__("a", "ü")) == '{"a": "ü"}'
    assert _patched('{"a": "\\u00e9"}', lambda d: d.__setitem__("a", "ü")) == '{"a": "\\u00fc"}'
    assert detect_style('{"a": "\\u00e9"}').ensure_ascii


def test_numbers_that_did_not_change_keep_their_spelling():
    text = '{"a": 1.50, "b": 1e3, "c": "x"}'
    assert _patched(text, lambda d: d.__setitem__("c", "y")) == '{"a": 1.50, "b": 1e3, "c": "y"}'


def test_spans_cover_exactly_each_value():
    text = ' { "k" : [ 1 , "two" , null ] } '
    root = parse_spans(text)
    items = root.members[0].value.items
    assert [text[i.start : i.end] for i in items] == ["1", '"two"', "null"]


def test_text_that_is_not_the_document_is_refused():
    with pytest.raises(SpanError):
        patch('{"a": 1}', {"a": 2}, {"a": 3})
