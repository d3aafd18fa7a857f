"""Every data file of the package is in the wheel: a template left out of pyproject's package-data works from a
checkout and fails only once installed (the user simulator's did, as TemplateNotFound on every scenario case)."""

from __future__ import annotations

import fnmatch
import re

from tests.support.paths import ROOT

PACKAGE = ROOT / "src" / "adk_eval_gate"


def package_data() -> list[str]:
    """The globs of `[tool.setuptools.package-data]` (read with a regex: no tomllib on Python 3.10)."""
    text = (ROOT / "pyproject.toml").read_text()
    section = text[text.index("[tool.setuptools.package-data]") :].split("\n[", 1)[0]
    return re.findall(r'"([^"]+)"', re.search(r"^adk_eval_gate = \[(.*)\]$", section, re.M).group(1))


def test_every_non_python_file_of_the_package_is_package_data():
    files = [
        p.relative_to(PACKAGE).as_posix()
        for p in PACKAGE.rglob("*")
        if p.is_file() and p.suffix not in (".py", ".pyc") and "__pycache__" not in p.parts
    ]
    assert files and "targets/templates/user_simulator.j2" in files
    missing = [f for f in files if not any(fnmatch.fnmatch(f, g) for g in package_data())]
    assert missing == [], f"add these to [tool.setuptools.package-data]: {missing}"
