"""Arguments checked before any work: a path that cannot be written neither costs a run nor leaves files behind,
and text that is not UTF-8 never reaches a results file, a comparison or a comment."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from adk_eval_gate.core.errors import InputError
from adk_eval_gate.core.files import check_output_dir, check_output_file, has_surrogates

_OUTPUT_FILES = {"run": ("output",), "compare": ("output",)}
_OUTPUT_DIRS = {"ci": "output_dir", "merge": "output_dir"}
DIR_FILES = ("results.json", "comparison.json", "junit.xml", "report.md", "report.html", "pull-request.json")
_GITHUB_FILES = {
    "ci": ("GITHUB_STEP_SUMMARY", "GITHUB_OUTPUT"),
    "merge": ("GITHUB_STEP_SUMMARY", "GITHUB_OUTPUT"),
    "publish": ("GITHUB_STEP_SUMMARY",),
}


def check_arguments(args: argparse.Namespace) -> None:
    for name, value in vars(args).items():
        for item in value if isinstance(value, list) else [value]:
            if isinstance(item, str) and has_surrogates(item):
                shown = item.encode("utf-8", "backslashreplace").decode()
                raise InputError(
                    None,
                    f"--{name.replace('_', '-')}",
                    f"{shown!r} is not valid UTF-8",
                    "pass UTF-8 text (rename the file if it is a path)",
                )


def check_outputs(args: argparse.Namespace) -> None:
    for name in _OUTPUT_FILES.get(args.command, ()):
        if getattr(args, name, None) is not None:
            check_output_file(getattr(args, name), f"--{name.replace('_', '-')}")
    written: set[Path] = set()
    if (dir_name := _OUTPUT_DIRS.get(args.command)) is not None:
        folder = check_output_dir(getattr(args, dir_name), f"--{dir_name.replace('_', '-')}")
        for file in DIR_FILES:
            if (folder / file).exists():
                check_output_file(folder / file, f"--{dir_name.replace('_', '-')}")
        # GitHub's files must not be what we write, nor a folder we create on the way to it
        written = {folder.absolute(), *folder.absolute().parents, *(folder.absolute() / file for file in DIR_FILES)}
    for variable in _GITHUB_FILES.get(args.command, ()):
        if os.environ.get(variable):
            path = check_output_file(os.environ[variable], variable, append=True)
            if path.absolute() in written:
                raise InputError(
                    None,
                    variable,
                    f"{path} is where this command writes its own output",
                    "point it at GitHub's file, outside --output-dir",
                )
