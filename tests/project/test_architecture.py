"""The layout holds: the import contract is kept (layers, no cycles), no module grows past 400 lines, no
subcommand handler past 60, and the architecture map names every module that exists."""

from __future__ import annotations

import ast
import re
import shutil
import subprocess
import sys
from pathlib import Path

from tests.support.paths import ROOT

PACKAGE = ROOT / "src" / "adk_eval_gate"


def _modules() -> list[Path]:
    return sorted(PACKAGE.rglob("*.py"))


def test_the_import_contract_is_kept():
    lint_imports = shutil.which("lint-imports", path=str(Path(sys.executable).parent))
    assert lint_imports, "import-linter is part of the dev extra"
    done = subprocess.run([lint_imports], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert "2 kept, 0 broken" in done.stdout


def test_no_module_is_over_400_lines():
    long = {str(p.relative_to(PACKAGE)): n for p in _modules() if (n := len(p.read_text().splitlines())) > 400}
    assert not long, long


def test_no_subcommand_handler_is_over_60_lines():
    for path in sorted((PACKAGE / "commands").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.FunctionDef) and node.name == "handle":
                assert node.end_lineno - node.lineno + 1 <= 60, (
                    f"{path.name}: handle() is {node.end_lineno - node.lineno + 1} lines"
                )


def test_the_map_names_every_module():
    text = (ROOT / "docs" / "architecture.md").read_text()
    missing = []
    for path in _modules():
        if path.name == "__init__.py" or path.parent == PACKAGE:
            continue
        if not re.search(rf"\b{re.escape(path.stem)}(\.py)?\b", text):
            missing.append(str(path.relative_to(PACKAGE)))
    assert not missing, f"docs/architecture.md does not mention {missing}"


def test_a_layer_folder_holds_every_module_but_the_public_entry_points():
    top = sorted(p.name for p in PACKAGE.glob("*.py"))
    assert top == ["__init__.py", "__main__.py", "pytest_plugin.py"], top
