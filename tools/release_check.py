"""Checks that everything a user pins names the one version (src/adk_eval_gate/core/version.py), before a release
publishes anything and in the test suite:

* the tag being released is `v<version>`;
* Dockerfile's default base image is the one the release publishes for that version;
* action.yml runs the prebuilt image `docker://ghcr.io/<owner>/adk-eval-gate:<version>`, so a job pulls instead
  of building;
* every `uses: …/adk-eval-gate@<ref>` in the shipped workflows and docs is `v<major>` or `v<version>`, and every
  `pip install adk-eval-gate` pins `==<version>` (or the repository at the tag `v<version>`);
* CHANGELOG.md has a section for the version.

    python tools/release_check.py [--tag vX.Y.Z] [--owner OWNER] [--root DIR]

Prints one line per problem (`file:line: problem; fix`) and exits 1, or prints the version and exits 0.
"""

from __future__ import annotations

import argparse
import ast
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
VERSION_FILE = "src/adk_eval_gate/core/version.py"
# Where users copy a pin from: the example workflows, the README and the docs.
PINNED_FILES = ("examples/workflows/*.yml", "examples/workflows/*.yaml", "README.md", "docs/*.md")
USES = re.compile(r"uses:\s*['\"]?[\w.-]+/adk-eval-gate@([^\s'\"#`]+)")
# One install command: from `pip install` to the end of that shell command (or of the inline code span).
PIP_INSTALL = re.compile(r"\bpip[x3]?\s+install\b([^`;&|)\n]*)")
# The distribution's name as a requirement, not a path or a longer name (adk-eval-gate-out, adk-eval-gate/...).
REQUIREMENT = re.compile(r"(?<![\w./-])adk-eval-gate(\[[\w,\s-]*\])?(?P<spec>[=<>!~]=?[\w.*+!-]*)?(?![\w./-])")


def read_version(root: Path) -> str:
    tree = ast.parse((root / VERSION_FILE).read_text())
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "__version__" for t in node.targets):
            return ast.literal_eval(node.value)
    raise SystemExit(f'{VERSION_FILE}: __version__: not found; define __version__ = "X.Y.Z"')


def image_for(owner: str, version: str) -> str:
    return f"docker://ghcr.io/{owner.lower()}/adk-eval-gate:{version}"


def _pinned_files(root: Path) -> list[Path]:
    return sorted({path for pattern in PINNED_FILES for path in root.glob(pattern)})


def pin_problems(root: Path, version: str) -> list[str]:
    major = version.split(".")[0]
    allowed_refs = {f"v{major}", f"v{version}"}
    problems = []
    for path in _pinned_files(root):
        name = path.relative_to(root).as_posix()
        for number, line in enumerate(path.read_text().splitlines(), start=1):
            for ref in USES.findall(line):
                if ref not in allowed_refs:
                    problems.append(
                        f"{name}:{number}: uses: adk-eval-gate@{ref}: not the released version; "
                        f"pin @v{major} (moves with {major}.x) or @v{version}"
                    )
            arguments = " ".join(install.group(1) for install in PIP_INSTALL.finditer(line))
            for match in REQUIREMENT.finditer(arguments):
                # before a release reaches PyPI: the repository at the release's tag pins it just as well
                tagged = re.match(rf"\s*@\s*git\+https://github\.com/[\w.-]+/adk-eval-gate@v{re.escape(version)}\b",
                                  arguments[match.end():])  # fmt: skip
                if match.group("spec") != f"=={version}" and not tagged:
                    found = match.group(0)
                    problems.append(
                        f"{name}:{number}: pip install {found}: not pinned to the released version; "
                        f"write adk-eval-gate{match.group(1) or ''}=={version}"
                    )
    return problems


def action_problems(root: Path, version: str, owner: str) -> list[str]:
    expected = image_for(owner, version)
    lines = (root / "action.yml").read_text().splitlines()
    images = [
        (n, line.split(":", 1)[1].strip().strip("'\""))
        for n, line in enumerate(lines, 1)
        if line.strip().startswith("image:")
    ]
    if [image for _, image in images] == [expected]:
        return []
    where = f"action.yml:{images[0][0]}" if images else "action.yml"
    found = images[0][1] if images else "no runs.image"
    return [
        f"{where}: runs.image: is {found}, a released action must run the prebuilt image; write image: '{expected}'"
    ]


def base_image_problems(root: Path, version: str, owner: str) -> list[str]:
    """Dockerfile's default base is the one this version's release publishes (a plain `docker build` uses it)."""
    expected = f"ghcr.io/{owner.lower()}/adk-eval-gate-base:{version}"
    for number, line in enumerate((root / "Dockerfile").read_text().splitlines(), start=1):
        if line.startswith("ARG BASE_IMAGE="):
            found = line.split("=", 1)[1].strip()
            if found == expected:
                return []
            return [f"Dockerfile:{number}: ARG BASE_IMAGE: is {found}; write ARG BASE_IMAGE={expected}"]
    return [f"Dockerfile: ARG BASE_IMAGE: missing; write ARG BASE_IMAGE={expected}"]


def changelog_problems(root: Path, version: str) -> list[str]:
    changelog = root / "CHANGELOG.md"
    if changelog.is_file() and re.search(rf"^## \[?{re.escape(version)}\]?", changelog.read_text(), re.MULTILINE):
        return []
    return [f"CHANGELOG.md: ## [{version}]: no section for the version being released; add what changed"]


def problems(root: Path, owner: str, tag: str | None) -> tuple[str, list[str]]:
    version = read_version(root)
    found = []
    if tag is not None and tag != f"v{version}":
        found.append(
            f"{VERSION_FILE}: __version__: is {version} but the tag is {tag}; "
            f"bump __version__ to {tag.removeprefix('v')} or tag v{version}"
        )
    found += action_problems(root, version, owner)
    found += base_image_problems(root, version, owner)
    found += pin_problems(root, version)
    found += changelog_problems(root, version)
    return version, found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tag", help="the git tag being released, e.g. v0.2.0")
    parser.add_argument("--owner", default="adk-eval-gate", help="the GitHub owner the image is pushed under")
    parser.add_argument("--root", type=Path, default=ROOT)
    args = parser.parse_args(argv)
    version, found = problems(args.root, args.owner, args.tag)
    for line in found:
        print(f"error: {line}", file=sys.stderr)
    if found:
        return 1
    print(version)
    return 0


if __name__ == "__main__":
    sys.exit(main())
