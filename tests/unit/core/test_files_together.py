"""Files that must change together (a baseline and its history) change together or not at all: a failure after
the first file was renamed into place puts it back; the failure is one `WriteError` line naming the file."""

from __future__ import annotations

import pytest

from adk_eval_gate.core.errors import EXIT_NOT_WRITTEN, WriteError
from adk_eval_gate.core.files import replace_together


def test_both_files_are_replaced_and_nothing_else_is_left(tmp_path):
    first, second = tmp_path / "results.json", tmp_path / "history.json"
    first.write_text("old baseline")
    replace_together([(first, "new baseline"), (second, "new history")])
    assert first.read_text() == "new baseline" and second.read_text() == "new history"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["history.json", "results.json"]


def test_a_failure_after_the_first_rename_puts_the_first_file_back(tmp_path):
    first, second = tmp_path / "results.json", tmp_path / "history.json"
    first.write_text("old baseline")
    second.mkdir()  # a directory where the second file goes: its rename fails after the first one succeeded
    (second / "keep").write_text("")
    with pytest.raises(WriteError) as caught:
        replace_together([(first, "new baseline"), (second, "new history")])
    assert first.read_text() == "old baseline", "the first file advanced alone"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["history.json", "results.json"]
    line = caught.value.render()
    assert str(second) in line and "nothing was changed" in line and "\n" not in line
    assert caught.value.exit_code == EXIT_NOT_WRITTEN


def test_a_new_first_file_is_removed_again(tmp_path):
    first, second = tmp_path / "results.json", tmp_path / "history.json"
    second.mkdir()
    (second / "keep").write_text("")
    with pytest.raises(WriteError):
        replace_together([(first, "new baseline"), (second, "new history")])
    assert not first.exists()
