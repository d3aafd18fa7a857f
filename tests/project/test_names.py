"""Names that explain themselves (issue #37, item 6): no two public classes of the package share a name, so a name
read in a traceback, a log or a review points at one thing."""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

from tests.support.paths import ROOT

PACKAGE = ROOT / "src" / "adk_eval_gate"

# Duplicates another branch of this round removes; each entry goes when that lands (the test below says so).
PENDING: dict[str, str] = {}


def public_classes(package: Path = PACKAGE) -> dict[str, list[str]]:
    """Every public class at the top of a module (a class a module builds inside a function is its own business),
    by name → the modules that define one."""
    found: dict[str, list[str]] = defaultdict(list)
    for path in sorted(package.rglob("*.py")):
        for node in ast.parse(path.read_text(), str(path)).body:
            if isinstance(node, ast.ClassDef) and not node.name.startswith("_"):
                found[node.name].append(str(path.relative_to(package)))
    return dict(found)


def test_no_two_public_classes_share_a_name():
    shared = {name: where for name, where in public_classes().items() if len(where) > 1 and name not in PENDING}
    assert not shared, f"public classes sharing a name (rename one so each name says its job): {shared}"


def test_every_pending_duplicate_is_still_one():
    """An entry of PENDING whose duplicate is gone must go too, or the list would hide the next one."""
    classes = public_classes()
    stale = [name for name in PENDING if len(classes.get(name, [])) < 2]
    assert not stale, f"remove {stale} from PENDING: they are no longer shared"


def test_the_check_finds_a_shared_name(tmp_path):
    """The scan itself: two modules defining the same public class are found, private and nested ones are not."""
    (tmp_path / "a.py").write_text("class Plan:\n    pass\n\n\nclass _Private:\n    pass\n")
    (tmp_path / "b.py").write_text("class Plan:\n    pass\n\n\ndef f():\n    class _Private:\n        pass\n")
    (tmp_path / "c.py").write_text("def g():\n    class Inner:\n        pass\n\n\nclass _Private:\n    pass\n")
    assert public_classes(tmp_path) == {"Plan": ["a.py", "b.py"]}
