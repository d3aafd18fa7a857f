"""The lowest-versions leg pins every runtime dependency to pyproject's floor; a dependency without one fails."""

from __future__ import annotations

import re
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
    assert set(pins) == {
        "pydantic",
        "rouge-score",
        "numpy",
        "nltk",
        "google-genai",
        "jinja2",
        "pyyaml",
        "requests",
        "typing-extensions",
    }
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


def test_ci_runs_every_leg_and_ci_run_covers_newest_and_the_pin():
    workflow = yaml.safe_load((ROOT / ".github" / "workflows" / "ci.yml").read_text())
    legs = [leg["leg"] for leg in workflow["jobs"]["dependencies"]["strategy"]["matrix"]["include"]]
    assert legs == ["newest", "lowest", "pin", "adk-floor", "adk-1"]
    makefile = (ROOT / "Makefile").read_text()
    assert all(f"\ntest-deps-{leg}:" in makefile for leg in legs)
    script = (ROOT / ".ci" / "run").read_text()
    assert "make test\n" in script and "make test-deps-newest" in script and "ADK_EVAL_GATE_REQUIRE_ADK=1" in script


def test_the_adk_floor_leg_tests_the_floor_the_adk_extra_admits():
    """The `[adk]` extra's lower bound is the version the floor leg installs: raising one without the other fails."""
    pyproject = (ROOT / "pyproject.toml").read_text()
    floor = re.search(r'^adk = \["google-adk>=([0-9.]+),<3"\]$', pyproject, re.M).group(1)
    makefile = (ROOT / "Makefile").read_text()
    pinned = re.search(r"^ADK_FLOOR \?= ([0-9.]+)$", makefile, re.M).group(1)
    assert pinned.split(".")[:2] == floor.split(".")[:2] and pinned.endswith(".0")
    assert "test-deps-adk-1:\n\t$(MAKE) test-deps-adk-floor ADK_FLOOR=1.39.1" in makefile
