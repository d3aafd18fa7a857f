"""Which workflow config a command uses when `--config` is not given: `eval-gate.yml`, found the way git finds its
repository — in the working directory or the nearest folder above it — so every command works from anywhere in
the checkout with the Action's own default.

The search never leaves the repository: it stops at the first folder holding `.git`, so a stray config in a parent
folder (another project, the home directory) is never picked up by accident.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from adk_eval_gate.core.errors import InputError

# The Action's `config` input defaults to this name too (action.yml).
DEFAULT_NAMES = ("eval-gate.yml", "eval-gate.yaml")


def find_config(start: Path) -> Path | None:
    """The nearest `eval-gate.yml` at or above `start`, within its repository (if any)."""
    here = start.absolute()
    for folder in (here, *here.parents):
        for name in DEFAULT_NAMES:
            candidate = folder / name
            if candidate.is_file():
                return candidate
        if (folder / ".git").exists():
            return None
    return None


def resolve_config(args: argparse.Namespace, start: Path | None = None) -> None:
    """Fill `args.config` for a command that takes one and was not given it.

    A command that needs a config (`config_wanted == "required"`) without one found is one line, exit 2, naming
    where we looked; one that only uses a config when there is one (`compare`, `view`) goes on without."""
    wanted = getattr(args, "config_wanted", None)
    if wanted is None or getattr(args, "config", None):
        return
    where = start or Path.cwd()
    found = find_config(where)
    if found is not None:
        args.config = _shown(found, where)
        return
    if wanted == "required":
        raise InputError(
            None,
            "--config",
            f"no {DEFAULT_NAMES[0]} in {where} or a folder above it (up to the repository root)",
            "pass --config PATH, or write one with `adk-eval-gate init` at the repository root",
        )


_DEFAULT_OUTPUTS = {
    "run": ("output",),
    "compare": ("results", "output"),
    "ci": ("output_dir",),
    "merge": ("output_dir",),
}


def place_outputs(args: argparse.Namespace) -> None:
    """Output paths the user did not give go beside the config, given or found: from a subfolder, or with
    `--config` naming a config elsewhere, the files land where a run from the config's own folder puts them (and
    where `view` and `compare` look), never in the working directory."""
    from adk_eval_gate.commands.help import OutputDefault

    config = getattr(args, "config", None)
    if not config:
        return
    folder = Path(config).parent
    for name in _DEFAULT_OUTPUTS.get(getattr(args, "command", ""), ()):
        value = getattr(args, name, None)
        if isinstance(value, OutputDefault) and folder != Path():
            setattr(args, name, OutputDefault(folder / value))


def _shown(path: Path, start: Path) -> str:
    """Relative to where the user stands when that is shorter, as they would have typed it."""
    try:
        return str(path.relative_to(start.absolute()))
    except ValueError:
        return str(path)
