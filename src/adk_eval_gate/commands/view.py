"""`adk-eval-gate view [DIR|results.json|report.html]`: render a run's report.html and open it in a browser.

A folder is an output folder (`ci`'s adk-eval-gate-out, a downloaded artifact); a results file is the page's
source. The page opened is always one this command rendered, from results.json (with comparison.json and
the history when they sit beside it), each read and validated as data, into a fresh private folder of its own:
a report.html found in the folder is never opened, since a downloaded artifact (a fork's) can carry any page,
and a page's script runs with the reader's browser. Where no browser can be started (a container, ssh), the
path and its file:// URL are printed instead, to open elsewhere.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import webbrowser
from pathlib import Path
from typing import TYPE_CHECKING, Any

from adk_eval_gate.core.errors import InputError

if TYPE_CHECKING:
    from adk_eval_gate.evalsets.adk_eval_schema import Invocation
    from adk_eval_gate.results.results_format import ResultsFile

DEFAULT_DIR = "adk-eval-gate-out"


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser(
        "view", help="render a run's report.html from its results.json and open it in a browser"
    )
    parser.add_argument(
        "path",
        nargs="?",
        help="an output folder (default adk-eval-gate-out), a results.json, or a report.html (its results.json)",
    )
    parser.add_argument("--config", help="the workflow YAML: add each unchanged case's expected turns")
    parser.add_argument("--no-open", action="store_true", help="only print the page's path and file:// URL")
    parser.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    return view(args.path, config=args.config, open_browser=not args.no_open)


def _results_of(target: Path) -> Path:
    """The results file the page is rendered from. A report.html names its folder; it is never opened itself."""
    if target.is_dir():
        results = target / "results.json"
        if not results.is_file():
            raise InputError(
                target,
                None,
                "holds no results.json to render the report from",
                "pass the folder `ci` wrote (adk-eval-gate-out) or a results file",
            )
        return results
    if target.suffix.lower() in (".html", ".htm"):
        results = target.parent / "results.json"
        if not results.is_file():
            raise InputError(
                target,
                None,
                "is a page this command did not render, and no results.json sits beside it to render ours from",
                "pass the results.json of that run (a page from elsewhere, a fork's artifact, could run anything)",
            )
        return results
    return target


def private_folder() -> Path:
    """A new folder only this user can write (mkdtemp: mode 0700, a name no one could have planted): the page
    opened is exactly the one written, whoever else can write the artifact's folder or the shared temp folder."""
    return Path(tempfile.mkdtemp(prefix="adk-eval-gate-view-"))


def _history(folder: Path) -> list[Any] | None:
    """The trend series of the history beside the results: a database (history.json as `ci` writes it, or a
    store's history.db), or an earlier version's JSON history.json."""
    from adk_eval_gate.baseline.history.database import MAGIC
    from adk_eval_gate.core.files import load_json, read_bytes

    # The output folder's history.json holds the database (what `ci` writes since history.db, under the name the
    # upload steps name); one of an earlier version holds JSON; a store's history.db copied beside it, the database.
    for path in (folder / "history.db", folder / "history.json"):
        if path.is_file() and ((data := read_bytes(path, "history")).startswith(MAGIC) or path.name == "history.db"):
            from adk_eval_gate.baseline.history.database import StoredHistory
            from adk_eval_gate.baseline.history.trend import trend_data
            from adk_eval_gate.core.errors import InputError

            try:
                return trend_data(StoredHistory.from_bytes(data))
            except ValueError as exc:
                fix = "view the results without it, or fetch the artifact again"
                raise InputError(path, None, str(exc), fix) from None
    path = folder / "history.json"
    if not path.is_file():
        return None
    data = load_json(path, "history")
    records = data.get("records") if isinstance(data, dict) else data
    return records if isinstance(records, list) else None


def _expected(config: str | None, results: ResultsFile) -> dict[tuple[str, str, str], list[Invocation]]:
    """The eval set's conversations, for the expected side of each turn; only for cases unchanged since the run
    (same case hash), since an edited case no longer says what that run was expected to do."""
    if not config:
        return {}
    from adk_eval_gate.results.build import case_hash
    from adk_eval_gate.run.plan import build_plan

    plan = build_plan(config)
    hashes = {(s.agent, s.eval_set_id, c.eval_id): c.case_hash for s in results.eval_sets for c in s.cases}
    expected: dict[tuple[str, str, str], list[Invocation]] = {}
    for agent in plan.agents:
        for eval_set in agent.eval_sets:
            for case in eval_set.file.eval_set.eval_cases:
                key = (agent.name, eval_set.eval_set_id, case.eval_id)
                if key in hashes and case.conversation is not None and hashes[key] in ("", case_hash(case)):
                    expected[key] = list(case.conversation)
    return expected


def render(results_path: Path, config: str | None = None) -> Path:
    """report.html in a new private folder, from the run's data files, each validated as its kind (a results file,
    a comparison file) before the folder is made; nothing of the artifact's own page is used."""
    from pydantic import ValidationError

    from adk_eval_gate.baseline.comparison_format import Comparison
    from adk_eval_gate.core.files import load_json
    from adk_eval_gate.core.validation import input_error_from
    from adk_eval_gate.report.html import write_report_html
    from adk_eval_gate.results.build import read_results

    results = read_results(results_path)
    comparison_path = results_path.parent / "comparison.json"
    comparison = None
    if comparison_path.is_file():
        try:
            comparison = Comparison.model_validate(load_json(comparison_path, "comparison file"))
        except ValidationError as exc:
            raise input_error_from(exc, comparison_path, model=Comparison) from None
        if comparison.run_id != results.run_id:  # another run's verdict over these results would tell two stories
            print(
                f"{comparison_path} is of another run ({comparison.run_id or 'unnamed'}, the results are of "
                f"{results.run_id or 'an unnamed run'}): rendered the results alone; "
                "`adk-eval-gate compare` makes their comparison"
            )
            comparison = None
    expected, history = _expected(config, results), _history(results_path.parent)
    folder = private_folder()
    try:
        return write_report_html(folder, results, comparison, expected, history)
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)  # a full disk leaves no empty folder behind
        raise


def _can_open() -> bool:
    """A graphical browser can only start with a display; webbrowser would otherwise pick a console browser (or
    none) and a headless machine would hang on it or say nothing useful."""
    if os.environ.get("BROWSER"):
        return True
    if sys.platform.startswith("linux") or sys.platform.startswith("freebsd"):
        return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))
    return True


def _default_folder() -> Path:
    """`adk-eval-gate-out` beside the nearest eval-gate.yml, where `run` and `ci` put it from any subfolder."""
    from adk_eval_gate.commands.config_file import find_config

    found = find_config(Path.cwd())
    if found is None:
        return Path(DEFAULT_DIR)
    folder = found.parent / DEFAULT_DIR
    return folder.relative_to(Path.cwd().absolute()) if folder.is_relative_to(Path.cwd().absolute()) else folder


def view(path: str | None = None, *, config: str | None = None, open_browser: bool = True) -> int:
    target = Path(path) if path else _default_folder()
    if not target.exists():
        raise InputError(
            None,
            "PATH",
            f"{target} does not exist",
            f"pass an output folder (default {DEFAULT_DIR}), a results.json or a report.html",
        )
    results = _results_of(target)
    page = render(results, config)
    print(f"rendered {page} from {results}")
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
