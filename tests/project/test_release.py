"""A release users can pin: one version source, every shipped pin names it, action.yml runs that version's image,
and the release workflow publishes exactly that (tools/release_check.py is what the workflow runs first)."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

import adk_eval_gate
from tests.support.paths import ROOT

try:
    import tomllib
except ImportError:  # Python 3.10: pip's vendored copy of the same parser
    from pip._vendor import tomli as tomllib

VERSION = adk_eval_gate.__version__
MAJOR, MINOR = VERSION.split(".")[0], VERSION.rsplit(".", 1)[0]


def release_check(root: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(ROOT / "tools" / "release_check.py"), "--root", str(root), *args],
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.fixture
def shipped(tmp_path) -> Path:
    """A copy of everything the release check reads, to break one thing at a time."""
    for name in ("action.yml", "Dockerfile", "CHANGELOG.md", "README.md", "src/adk_eval_gate/core/version.py"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / name, tmp_path / name)
    shutil.copytree(ROOT / "examples" / "workflows", tmp_path / "examples" / "workflows")
    shutil.copytree(ROOT / "docs", tmp_path / "docs")
    return tmp_path


def test_the_version_lives_in_one_place():
    assert re.fullmatch(r"\d+\.\d+\.\d+", VERSION)
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert "version" not in project["project"] and project["project"]["dynamic"] == ["version"]
    assert project["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "adk_eval_gate.core.version.__version__"}
    done = subprocess.run(
        [sys.executable, "-m", "adk_eval_gate.commands.main", "--version"], capture_output=True, text=True
    )
    assert done.stdout.strip() == f"adk-eval-gate {VERSION}"


def test_package_metadata_users_see_on_pypi():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    meta = project["project"]
    assert meta["license"] == "Apache-2.0" and meta["license-files"] == ["LICENSE"]
    license_text = (ROOT / "LICENSE").read_text()
    assert "Apache License" in license_text and "Version 2.0, January 2004" in license_text
    assert {"Repository", "Issues", "Changelog"} <= set(meta["urls"])
    assert "Typing :: Typed" in meta["classifiers"]
    ci = yaml.safe_load((ROOT / ".github" / "workflows" / "ci.yml").read_text())
    for python in ci["jobs"]["test"]["strategy"]["matrix"]["python-version"]:
        assert f"Programming Language :: Python :: {python}" in meta["classifiers"]
    assert (ROOT / "src" / "adk_eval_gate" / "py.typed").is_file()
    assert "py.typed" in project["tool"]["setuptools"]["package-data"]["adk_eval_gate"]
    assert re.search(rf"^## \[{re.escape(VERSION)}\]$", (ROOT / "CHANGELOG.md").read_text(), re.MULTILINE)


def test_the_repository_is_consistent_for_its_version():
    done = release_check(ROOT, "--tag", f"v{VERSION}")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == VERSION
    action = yaml.safe_load((ROOT / "action.yml").read_text())
    assert action["runs"] == {
        "using": "docker",
        "image": f"docker://ghcr.io/adk-eval-gate/adk-eval-gate:{VERSION}",
    }


def test_every_shipped_pin_names_the_version():
    """Read independently of the release check: what a user copies from the examples, README and docs."""
    uses, installs = [], []
    for path in [*ROOT.glob("examples/workflows/*.yml"), ROOT / "README.md", *ROOT.glob("docs/*.md")]:
        text = path.read_text()
        uses += re.findall(r"uses:\s*[\w.-]+/adk-eval-gate@([\w.-]+)", text)
        installs += [line for line in text.splitlines() if re.search(r"pip install .*adk-eval-gate(?![\w-])", line)]
    assert uses and installs
    assert set(uses) <= {f"v{MAJOR}", f"v{VERSION}"}, uses
    for line in installs:
        pinned = rf"adk-eval-gate(\[[\w,]+\])?=={re.escape(VERSION)}(?![\w.])"
        tagged = rf"adk-eval-gate(\[[\w,]+\])? @ git\+https://github.com/[\w.-]+/adk-eval-gate@v{re.escape(VERSION)}\b"
        assert re.search(pinned, line) or re.search(tagged, line), line


@pytest.mark.parametrize(
    ("where", "old", "new", "expected"),
    [
        (
            "action.yml",
            f"adk-eval-gate:{VERSION}",
            "adk-eval-gate:0.0.1",
            "runs.image: is docker://ghcr.io/adk-eval-gate/adk-eval-gate:0.0.1, a released action must run the "
            "prebuilt "
            f"image; write image: 'docker://ghcr.io/adk-eval-gate/adk-eval-gate:{VERSION}'",
        ),
        (
            "action.yml",
            f"docker://ghcr.io/adk-eval-gate/adk-eval-gate:{VERSION}",
            "Dockerfile",
            "runs.image: is Dockerfile",
        ),
        (
            "examples/workflows/eval-gate-fork-publish.yml",
            f"adk-eval-gate=={VERSION}",
            "adk-eval-gate",
            f"pip install adk-eval-gate: not pinned to the released version; write adk-eval-gate=={VERSION}",
        ),
        (
            "examples/workflows/eval-gate-shards.yml",
            f'"adk-eval-gate[adk]=={VERSION}"',
            '"adk-eval-gate[adk]>=0.1"',
            "pip install adk-eval-gate[adk]>=0.1: not pinned to the released version; write "
            f"adk-eval-gate[adk]=={VERSION}",
        ),
        (
            "examples/workflows/eval-gate-pr.yml",
            f"adk-eval-gate@v{MAJOR}",
            "adk-eval-gate@main",
            f"uses: adk-eval-gate@main: not the released version; pin @v{MAJOR}",
        ),
        ("CHANGELOG.md", f"## [{VERSION}]", "## [Unreleased]", f"CHANGELOG.md: ## [{VERSION}]: no section"),
        (
            "Dockerfile",
            f"adk-eval-gate-base:{VERSION}",
            "adk-eval-gate-base:0.1",
            f"ARG BASE_IMAGE: is ghcr.io/adk-eval-gate/adk-eval-gate-base:0.1; "
            f"write ARG BASE_IMAGE=ghcr.io/adk-eval-gate/adk-eval-gate-base:{VERSION}",
        ),
    ],
)
def test_the_release_check_names_each_inconsistency(shipped, where, old, new, expected):
    path = shipped / where
    assert old in path.read_text()
    path.write_text(path.read_text().replace(old, new, 1))
    done = release_check(shipped, "--tag", f"v{VERSION}")
    assert done.returncode == 1 and done.stdout == ""
    (line,) = done.stderr.splitlines()
    assert line.startswith(f"error: {where}") and expected in line


def test_a_tag_that_is_not_the_version_publishes_nothing(shipped):
    done = release_check(shipped, "--tag", "v9.9.9")
    assert done.returncode == 1
    assert (
        f"__version__: is {VERSION} but the tag is v9.9.9; bump __version__ to 9.9.9 or tag v{VERSION}" in done.stderr
    )
    # A fork releasing under its own owner must point action.yml at its own image first.
    done = release_check(shipped, "--tag", f"v{VERSION}", "--owner", "SomeFork")
    assert f"write image: 'docker://ghcr.io/somefork/adk-eval-gate:{VERSION}'" in done.stderr


def steps_of(job: dict) -> list[dict]:
    return job["steps"]


def test_the_release_workflow_publishes_that_version_everywhere():
    workflow = yaml.safe_load((ROOT / ".github" / "workflows" / "release.yml").read_text())
    assert workflow[True]["push"]["tags"] == ["v[0-9]+.[0-9]+.[0-9]+"]  # pyyaml reads `on:` as True
    assert workflow["permissions"] == {"contents": "read"}
    jobs = workflow["jobs"]
    check_runs = " ".join(step.get("run", "") for step in steps_of(jobs["check"]))
    assert "tools/release_check.py --tag" in check_runs
    # Nothing is published before the check passed; the vX tag moves only once the image and PyPI are done.
    assert jobs["dist"]["needs"] == "check"
    assert {"check", "dist"} <= set(jobs["image"]["needs"]) and {"image", "dist"} <= set(jobs["pypi"]["needs"])
    assert {"image", "pypi"} <= set(jobs["tag"]["needs"])

    dist_runs = " ".join(step.get("run", "") for step in steps_of(jobs["dist"]))
    assert "python -m build" in dist_runs and "twine check --strict dist/*" in dist_runs

    pypi = jobs["pypi"]
    assert pypi["permissions"] == {"id-token": "write"} and pypi["environment"]["name"] == "pypi"
    assert any(step.get("uses", "").startswith("pypa/gh-action-pypi-publish@") for step in steps_of(pypi))
    assert not any("password" in step.get("with", {}) for step in steps_of(pypi))  # trusted publishing, no token

    image = jobs["image"]
    assert image["permissions"]["packages"] == "write"
    builds = [step for step in steps_of(image) if step.get("uses", "").startswith("docker/build-push-action@")]
    assert [step["with"]["file"] for step in builds] == ["Dockerfile.base", "Dockerfile"]
    final = builds[1]["with"]
    assert final["push"] is True and final["build-args"] == "BASE_IMAGE=${{ env.BASE }}:${{ env.VERSION }}"
    assert final["tags"].splitlines() == [
        "${{ env.IMAGE }}:${{ env.VERSION }}",
        "${{ env.IMAGE }}:${{ needs.check.outputs.minor }}",
        "${{ env.IMAGE }}:${{ needs.check.outputs.major }}",
    ]
    assert image["env"]["IMAGE"] == "ghcr.io/${{ needs.check.outputs.owner }}/adk-eval-gate"

    tag = jobs["tag"]
    assert (
        tag["permissions"] == {"contents": "write"} and tag["env"]["MAJOR_TAG"] == "v${{ needs.check.outputs.major }}"
    )
    tag_runs = " ".join(step.get("run", "") for step in steps_of(tag))
    assert (
        'git tag --force "$MAJOR_TAG" "$GITHUB_SHA"' in tag_runs
        and 'git push --force origin "refs/tags/$MAJOR_TAG"' in tag_runs
    )


def test_the_version_outputs_the_release_computes(tmp_path):
    """The check job's shell: version, X.Y and X from the check's output, as the image tags use them."""
    workflow = yaml.safe_load((ROOT / ".github" / "workflows" / "release.yml").read_text())
    (script,) = [step["run"] for step in steps_of(workflow["jobs"]["check"]) if step.get("id") == "version"]
    output = tmp_path / "output"
    env = {
        "PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin",
        "TAG": f"v{VERSION}",
        "OWNER": "Adk-Eval-Gate",
        "GITHUB_OUTPUT": str(output),
    }
    done = subprocess.run(["bash", "-e", "-c", script], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert output.read_text().splitlines() == [
        f"version={VERSION}",
        f"minor={MINOR}",
        f"major={MAJOR}",
        "owner=adk-eval-gate",
    ]
    env["TAG"] = "v0.0.0"
    assert subprocess.run(["bash", "-e", "-c", script], cwd=ROOT, env=env, capture_output=True).returncode != 0


def test_the_github_release_notes_are_the_versions_changelog_section(tmp_path):
    workflow = yaml.safe_load((ROOT / ".github" / "workflows" / "release.yml").read_text())
    (script,) = [step["run"] for step in steps_of(workflow["jobs"]["tag"]) if "CHANGELOG.md" in step.get("run", "")]
    (awk,) = [line for line in script.splitlines() if line.startswith("awk ")]
    shutil.copy(ROOT / "CHANGELOG.md", tmp_path / "CHANGELOG.md")
    done = subprocess.run(["bash", "-e", "-c", awk], cwd=tmp_path, env={"PATH": "/usr/bin:/bin", "VERSION": VERSION})
    assert done.returncode == 0
    notes = (tmp_path / "notes.md").read_text()
    changelog = (ROOT / "CHANGELOG.md").read_text()
    section = changelog.split(f"## [{VERSION}]\n", 1)[1].split("\n## ", 1)[0]
    assert notes.strip() == section.strip() and "### Added" in notes
