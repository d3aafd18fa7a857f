"""The type checker is part of the build: `make test` runs mypy on the whole package, and the modules held to
`--strict` exist (a renamed module would silently fall out of the list and lose its strictness)."""

from __future__ import annotations

import re
import sys

from tests.support.paths import ROOT

if sys.version_info >= (3, 11):
    import tomllib
else:  # the floor, 3.10: tomli is what pip vendors there
    import pip._vendor.tomli as tomllib

PACKAGE = ROOT / "src" / "adk_eval_gate"


def _strict_modules() -> list[str]:
    mypy = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["mypy"]
    (strict,) = [o for o in mypy["overrides"] if o.get("disallow_untyped_defs")]
    assert strict["disallow_any_generics"] and strict["warn_return_any"] and not strict["implicit_reexport"]
    return strict["module"]


def test_make_test_runs_the_type_checker_after_the_import_contract():
    target = re.search(r"^test:.*\n((?:\t.*\n)+)", (ROOT / "Makefile").read_text(), re.M)
    assert target, "the Makefile has a test target"
    steps = [line.strip() for line in target.group(1).splitlines()]
    assert "$(BIN)/mypy" in steps
    assert steps.index("$(BIN)/lint-imports") < steps.index("$(BIN)/mypy") < len(steps) - 1  # before pytest


def test_every_module_held_strict_exists():
    modules = _strict_modules()
    assert len(modules) >= 100
    for name in modules:
        parts = name.removesuffix(".*").split(".")
        path = ROOT / "src" / "/".join(parts)
        assert path.with_suffix(".py").is_file() or (path / "__init__.py").is_file(), f"{name} is not a module"
