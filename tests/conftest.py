from __future__ import annotations

import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "hello_world"


@pytest.fixture
def example(tmp_path: Path) -> Path:
    """A private copy of the bundled example (tests may edit it)."""
    target = tmp_path / "hello_world"
    shutil.copytree(EXAMPLE, target, ignore=shutil.ignore_patterns("__pycache__", ".adk"))
    return target


@pytest.fixture
def write(tmp_path: Path):
    def _write(name: str, content: str | bytes) -> Path:
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")
        return path

    return _write
