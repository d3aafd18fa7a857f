"""The import guard of a sealed process (core/sealed.py), on a small install of its own: what changed after the
snapshot never runs here (a marker its code would write stays absent) and is remembered, so the run fails; what is
new is not there for this process; what did not change loads as before."""

from __future__ import annotations

import importlib
import os
import py_compile
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from adk_eval_gate.core import sealed as sealing
from adk_eval_gate.core.errors import InputError
from adk_eval_gate.core.sealed import ImportGuard, SealBroken, check_sealed, take_snapshot


@pytest.fixture
def install(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A directory on sys.path holding a package `sealpkg` with a few modules, as an install would."""
    root = tmp_path / "site"
    package = root / "sealpkg"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    for name in ("early", "lazy", "cached", "swapped"):
        (package / f"{name}.py").write_text(f"VALUE = {name!r}\n")
    (package / "data.txt").write_text("template\n")
    py_compile.compile(str(package / "cached.py"), doraise=True)
    monkeypatch.syspath_prepend(str(root))
    importlib.invalidate_caches()
    yield root
    for name in [n for n in sys.modules if n == "sealpkg" or n.startswith("sealpkg.")]:
        del sys.modules[name]


@pytest.fixture
def guard(install: Path) -> Iterator[ImportGuard]:
    importlib.import_module("sealpkg.early")  # imported before the seal: stays as it is
    snapshot = take_snapshot([str(install)], [str(install / "sealpkg")], [])
    guard = ImportGuard(snapshot)
    sys.meta_path.insert(0, guard)
    time.sleep(0.01)  # past the file system's clock tick, so a write below gets a later ctime
    try:
        yield guard
    finally:
        sys.meta_path.remove(guard)
        importlib.invalidate_caches()


def hostile(marker: Path) -> str:
    return f"import pathlib; pathlib.Path({str(marker)!r}).write_text('ran')\nVALUE = 'patched'\n"


def test_a_module_rewritten_after_the_snapshot_never_runs(install, guard, tmp_path):
    marker = tmp_path / "marker"
    (install / "sealpkg" / "lazy.py").write_text(hostile(marker))
    with pytest.raises(SealBroken, match=r"sealpkg/lazy\.py: changed after the run started"):
        importlib.import_module("sealpkg.lazy")
    assert not marker.exists()
    assert guard.refused == [str(install / "sealpkg" / "lazy.py")]
    with pytest.raises(InputError) as refused:  # whatever caught the import's error, the run fails
        check_sealed()
    assert "\n" not in str(refused.value) and refused.value.exit_code == 2


def test_a_file_renamed_over_or_linked_in_is_refused(install, guard, tmp_path):
    marker = tmp_path / "marker"
    outside = tmp_path / "outside.py"
    outside.write_text(hostile(marker))
    os.utime(outside, ns=(0, 0))  # an old mtime does not help: the rename moves the ctime
    os.replace(outside, install / "sealpkg" / "swapped.py")
    with pytest.raises(SealBroken):
        importlib.import_module("sealpkg.swapped")
    # a directory swapped for a link into the checkout: the path now reaches another file
    checkout = tmp_path / "checkout"
    checkout.mkdir()
    (checkout / "__init__.py").write_text("")
    (checkout / "lazy.py").write_text(hostile(marker))
    os.rename(install / "sealpkg", tmp_path / "moved")
    os.symlink(checkout, install / "sealpkg")
    for name in [n for n in sys.modules if n.startswith("sealpkg")]:
        del sys.modules[name]
    importlib.invalidate_caches()
    with pytest.raises(SealBroken):
        importlib.import_module("sealpkg.lazy")
    assert not marker.exists()


def test_a_new_module_is_not_there_for_this_process(install, guard, tmp_path):
    marker = tmp_path / "marker"
    (install / "sealpkg" / "added.py").write_text(hostile(marker))
    (install / "sitecustomize_added.py").write_text(hostile(marker))
    importlib.invalidate_caches()
    for name in ("sealpkg.added", "sitecustomize_added"):
        with pytest.raises(ModuleNotFoundError, match="added after the run started"):
            importlib.import_module(name)
    assert not marker.exists()
    assert guard.refused == []  # not a failure: setup installs the agent's own packages beside ours
    check_sealed()


def test_planted_bytecode_is_ignored_and_unchanged_modules_load(install, guard, tmp_path):
    marker = tmp_path / "marker"
    source = install / "sealpkg" / "cached.py"
    # bytecode for the unchanged source, whose header (source mtime and size) still matches: Python would run it
    planted = tmp_path / "planted.py"
    planted.write_text(hostile(marker).replace("'patched'", "'cached'"))
    stat = source.stat()
    cache = importlib.util.cache_from_source(str(source))
    py_compile.compile(str(planted), cfile=cache, doraise=True)
    data = bytearray(Path(cache).read_bytes())
    data[8:16] = (int(stat.st_mtime) & 0xFFFFFFFF).to_bytes(4, "little") + (stat.st_size & 0xFFFFFFFF).to_bytes(
        4, "little"
    )
    Path(cache).write_bytes(bytes(data))
    assert importlib.import_module("sealpkg.cached").VALUE == "cached"
    assert not marker.exists()  # the source ran, not the planted bytecode
    assert importlib.import_module("sealpkg.lazy").VALUE == "lazy"
    assert importlib.import_module("sealpkg.early").VALUE == "early"
    assert not (install / "sealpkg" / "__pycache__" / Path(cache).name.replace("cached", "lazy")).exists()
    check_sealed()


def test_a_checked_data_file_that_changed_fails_the_run(install, guard):
    (install / "sealpkg" / "data.txt").write_text("{{ changed }}\n")
    with pytest.raises(SealBroken, match=r"data\.txt: changed after the run started"):
        check_sealed()


def test_sealed_only_with_a_token_and_always_unsealed(install):
    with sealing.sealed(False) as nothing:
        assert nothing is None and sealing.current_guard() is None
    with pytest.raises(RuntimeError), sealing.sealed(True) as guard:
        assert guard is not None and sys.meta_path[0] is guard
        assert str(install) in guard.snapshot.roots
        raise RuntimeError
    assert sealing.current_guard() is None


def test_the_snapshot_of_this_venv_is_quick():
    """Measured on google-adk's install (about 30,000 files): well under the 0.3 s budget of the notes."""
    started = time.process_time()
    with sealing.sealed(True) as guard:
        spent = time.process_time() - started
        assert guard is not None and len(guard.snapshot.files) > 1000
    assert spent < 1.5  # a loose bound for a loaded machine; the notes hold the measured figure
