"""A local `ci` writes nothing outside its output folder, from any working directory: not ADK eval history in the
agent's folder (only when the config asks for it, `eval_history: true`), not an output folder in the subfolder it
was started from. The bundled example, copied, run as a user runs it (a subprocess, from a subfolder)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
OUT = "adk-eval-gate-out"


def _snapshot(root: Path, output: Path) -> dict[str, tuple[bytes, int]]:
    """Every file and folder under `root` but the output folder: its bytes and modification time."""
    found: dict[str, tuple[bytes, int]] = {}
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if Path(folder, d) != output]
        for name in [*dirs, *files]:
            path = Path(folder, name)
            # the config's folder gains the output folder: its own time changes, and only that
            mtime = 0 if path == output.parent else path.stat().st_mtime_ns
            found[str(path.relative_to(root))] = (b"" if path.is_dir() else path.read_bytes(), mtime)
    return found


def _ci(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GITHUB_") and k != "CI"}
    env["PYTHONPATH"] = str(ROOT / "src")
    return subprocess.run(
        [sys.executable, "-m", "adk_eval_gate", "ci", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )


def test_ci_from_a_subfolder_writes_only_its_output_folder_beside_the_config(tmp_path):
    example = tmp_path / "hello_world"
    shutil.copytree(ROOT / "examples" / "hello_world", example, ignore=shutil.ignore_patterns("__pycache__", ".adk"))
    before = _snapshot(tmp_path, example / OUT)
    done = _ci(example / "evals")
    assert done.returncode in (0, 1), done.stdout + done.stderr
    after = _snapshot(tmp_path, example / OUT)
    assert sorted(set(after) - set(before)) == [], "written outside the output folder"
    assert [k for k in before if before[k] != after.get(k)] == [], "changed outside the output folder"
    assert (example / OUT / "results.json").is_file()
    assert (example / OUT / "report.md").is_file()


def test_eval_history_is_written_where_the_config_asks_for_it(tmp_path):
    example = tmp_path / "hello_world"
    shutil.copytree(ROOT / "examples" / "hello_world", example, ignore=shutil.ignore_patterns("__pycache__", ".adk"))
    config = example / "eval-gate.yml"
    config.write_text(config.read_text().replace("agent: hello_world}", "agent: hello_world, eval_history: true}"))
    done = _ci(example)
    assert done.returncode in (0, 1), done.stdout + done.stderr
    assert len(list((example / "hello_world" / ".adk" / "eval_history").glob("*.evalset_result.json"))) == 1
