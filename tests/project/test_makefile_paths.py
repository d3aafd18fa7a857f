"""Every test file the Makefile names exists: the dependency legs run lists of test files, and a list that names
a moved file runs nothing of it (pytest exits 4 on a missing path, or a --deselect quietly matches nothing)."""

from __future__ import annotations

import re

from tests.support.paths import ROOT


def test_every_test_path_in_the_makefile_exists():
    named = set(re.findall(r"\b(tests/[\w/]+\.py)(?:::(\w+))?", (ROOT / "Makefile").read_text()))
    assert len(named) >= 20
    for path, test in sorted(named):
        assert (ROOT / path).is_file(), f"the Makefile names {path}, which does not exist"
        if test:
            assert re.search(rf"^(async )?def {test}\(", (ROOT / path).read_text(), re.M), f"{path}::{test}"
