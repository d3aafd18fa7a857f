"""The lowest-versions leg pins every runtime dependency to pyproject's floor; a dependency without one fails."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import yaml

from tests.support.paths import ROOT

SCRIPT = ROOT / ".ci" / "lowest-constraints.py"


def constraints(pyproject: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(SCRIPT), str(pyproject)], capture_output=True, text=True, timeout=60)


def test_every_runtime_dependency_is_pinned_to_its_floor():
    done = constraints(ROOT / "pyproject.toml")
    assert done.returncode == 0, done.stderr
    pins = dict(line.split("==") for line in done.stdout.split())
    assert set(pins) == {"pydantic", "rouge-score", "nltk", "google-genai", "jinja2", "pyyaml", "requests"}
    assert pins["google-genai"] == "2.25" and pins["nltk"] == "3.9.1"


def test_a_dependency_without_a_floor_is_an_error(tmp_path):
    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_text('[project]\nname = "x"\ndependencies = [\n  "pydantic>=2.12.5,<3",\n  "nltk!=3.10.1",\n]\n')
    done = constraints(pyproject)
    assert done.returncode == 2 and not done.stdout
    assert done.stderr.strip() == (
        f"{pyproject}: project.dependencies: 'nltk' has no lower bound; add one "
        "(e.g. nltk>=X.Y) that the lowest-versions leg can test"
    )


def test_ci_runs_all_three_legs_and_ci_run_covers_newest_and_the_pin():
    workflow = yaml.safe_load((ROOT / ".github" / "workflows" / "ci.yml").read_text())
    legs = [leg["leg"] for leg in workflow["jobs"]["dependencies"]["strategy"]["matrix"]["include"]]
    assert legs == ["newest", "lowest", "pin"]
    makefile = (ROOT / "Makefile").read_text()
    assert all(f"\ntest-deps-{leg}:" in makefile for leg in legs)
    script = (ROOT / ".ci" / "run").read_text()
    assert "make test\n" in script and "make test-deps-newest" in script and "ADK_EVAL_GATE_REQUIRE_ADK=1" in script
