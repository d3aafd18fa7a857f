"""`adk-eval-gate view [DIR|results.json|report.html]`: open a run's report.html in a browser.

A folder is an output folder (`ci`'s adk-eval-gate-out, a downloaded artifact); a results file is the page's
source. The page is (re)rendered from results.json, with comparison.json and history.json when they sit beside
it, when it is missing or older than them. Where no browser can be started (a container, ssh), the path and its
file:// URL are printed instead, to open elsewhere.
"""

from __future__ import annotations

import argparse
import os
import sys
import webbrowser
from pathlib import Path
from typing import Any

from adk_eval_gate.core.clip import masked_lines
from adk_eval_gate.core.errors import InputError

DEFAULT_DIR = "adk-eval-gate-out"


def add_parser(commands: argparse._SubParsersAction) -> None:
    parser = commands.add_parser(
        "view", help="open a run's report.html in a browser (rendered from results.json if missing)"
    )
    parser.add_argument(
        "path", nargs="?", help="an output folder (default adk-eval-gate-out), a results.json or a report.html"
    )
    parser.add_argument("--config", help="the workflow YAML: re-render with each unchanged case's expected turns")
    parser.add_argument("--no-open", action="store_true", help="only print the page's path and file:// URL")
    parser.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    return view(args.path, config=args.config, open_browser=not args.no_open)


def _sources(path: Path) -> tuple[Path, Path | None]:
    """(report.html, results.json or None): what to open and what it is rendered from."""
    if path.is_dir():
        results = path / "results.json"
        return path / "report.html", results if results.is_file() else None
    if path.suffix.lower() in (".html", ".htm"):
        return path, None
    return path.parent / "report.html", path


def _stale(page: Path, sources: list[Path]) -> bool:
    if not page.is_file():
        return True
    built = page.stat().st_mtime
    return any(source.is_file() and source.stat().st_mtime > built for source in sources)


def _history(folder: Path) -> list[Any] | None:
    path = folder / "history.json"
    if not path.is_file():
        return None
    from adk_eval_gate.core.files import load_json

    data = load_json(path, "history")
    records = data.get("records") if isinstance(data, dict) else data
    return records if isinstance(records, list) else None


def _expected(config: str | None, results) -> dict:
    """The eval set's conversations, for the expected side of each turn; only for cases unchanged since the run
    (same case hash), since an edited case no longer says what that run was expected to do."""
    if not config:
        return {}
    from adk_eval_gate.results.build import case_hash
    from adk_eval_gate.run.plan import build_plan

    plan = build_plan(config)
    hashes = {(s.agent, s.eval_set_id, c.eval_id): c.case_hash for s in results.eval_sets for c in s.cases}
    expected = {}
    for agent in plan.agents:
        for eval_set in agent.eval_sets:
            for case in eval_set.file.eval_set.eval_cases:
                key = (agent.name, eval_set.eval_set_id, case.eval_id)
                if key in hashes and case.conversation is not None and hashes[key] in ("", case_hash(case)):
                    expected[key] = list(case.conversation)
    return expected


def render(results_path: Path, page: Path, config: str | None = None) -> Path:
    from adk_eval_gate.baseline.models import Comparison
    from adk_eval_gate.report.html import write_report_html
    from adk_eval_gate.results.build import read_results

    results = read_results(results_path)
    comparison_path = results_path.parent / "comparison.json"
    comparison = None
    if comparison_path.is_file():
        try:
            comparison = Comparison.model_validate_json(comparison_path.read_text(encoding="utf-8"))
        except ValueError as exc:
            raise InputError(
                comparison_path,
                None,
                f"is not a comparison file: {masked_lines(str(exc))[0]}",
                "move it away to see the results alone",
            ) from None
    return write_report_html(
        page.parent, results, comparison, _expected(config, results), _history(results_path.parent)
    )


def _can_open() -> bool:
    """A graphical browser can only start with a display; webbrowser would otherwise pick a console browser (or
    none) and a headless machine would hang on it or say nothing useful."""
    if os.environ.get("BROWSER"):
        return True
    if sys.platform.startswith("linux") or sys.platform.startswith("freebsd"):
        return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))
    return True


def view(path: str | None = None, *, config: str | None = None, open_browser: bool = True) -> int:
    target = Path(path or DEFAULT_DIR)
    if not target.exists():
        raise InputError(
            None,
            "PATH",
            f"{target} does not exist",
            f"pass an output folder (default {DEFAULT_DIR}), a results.json or a report.html",
        )
    page, results = _sources(target)
    sources = [results, results.parent / "comparison.json", results.parent / "history.json"] if results else []
    if results is not None and (config or _stale(page, sources)):
        page = render(results, page, config)
        print(f"rendered {page} from {results}")
    elif not page.is_file():
        raise InputError(
            target,
            None,
            "holds neither report.html nor results.json",
            "pass the folder `ci` wrote (adk-eval-gate-out) or a results file",
        )
    url = page.resolve().as_uri()
    print(f"report: {page}")
    opened = False
    if open_browser and _can_open():
        try:
            opened = webbrowser.open(url)
        except webbrowser.Error:
            opened = False
    if opened:
        print(f"opened {url} in your browser")
    elif open_browser:
        print(f"no browser to start here: open {url} in a browser (the page works offline, copied anywhere)")
    else:
        print(url)
    return 0
