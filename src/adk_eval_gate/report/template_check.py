"""A comment template override is checked before any agent runs: one that does not parse or render would only
fail after every agent ran, costing the report and the comment."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from adk_eval_gate.core.clip import clip, single_line
from adk_eval_gate.core.errors import InputError
from adk_eval_gate.core.files import read_text
from adk_eval_gate.core.paths import relative_posix

if TYPE_CHECKING:  # every run checks; only a config with its own templates needs the report machinery loaded
    from adk_eval_gate.config.loader import Workflow


def check_report_templates(workflow: Workflow) -> None:
    """A comment template that does not parse would only fail after every agent ran, leaving no report."""
    folder = workflow.template_dir
    if folder is None:
        return
    if not folder.is_dir():
        raise InputError(
            workflow.path,
            "report.templates",
            f"{relative_posix(workflow.base_dir, folder)} is not a folder",
            "point at a folder holding comment.md.j2",
        )
    import jinja2

    from adk_eval_gate.report.markdown import environment

    templates = environment(folder)
    for path in sorted(folder.glob("*.j2")):
        shown = relative_posix(workflow.base_dir, path)
        try:
            templates.parse(read_text(path, "report template"))
        except InputError as exc:
            raise exc.with_file(shown) from None
        except jinja2.TemplateSyntaxError as exc:
            raise InputError(
                shown, None, f"template syntax error: {exc.message}", "fix the Jinja syntax", line=exc.lineno
            ) from None
    _trial_render(workflow, folder)


def _trial_render(workflow: Workflow, folder: Path) -> None:
    """Renders the override once on an empty run: an unknown variable, filter or include fails here, not after
    every agent ran (when it would cost the report and the comment)."""
    import jinja2

    from adk_eval_gate.baseline.stores import LoadOutcome
    from adk_eval_gate.gate.comparison_file import build_comparison
    from adk_eval_gate.report.markdown import CommentPlace, render_report
    from adk_eval_gate.results.build import tool_info
    from adk_eval_gate.results.results_format import Counts, GitInfo, ResultsFile, Timings

    results = ResultsFile(
        tool=tool_info(),
        git=GitInfo(),
        config_file=workflow.path.name,
        timings=Timings(
            started_at="", finished_at="", duration_seconds=0.0, inference_seconds=0.0, scoring_seconds=0.0
        ),
        summary=Counts(),
        eval_sets=[],
    )
    comparison = build_comparison(results, LoadOutcome(None, []), workflow.settings.gate)
    try:
        render_report(comparison, results, {}, CommentPlace(template_dir=folder))
    except jinja2.TemplateError as exc:
        where = f"{relative_posix(workflow.base_dir, folder)}/{getattr(exc, 'name', None) or 'comment.md.j2'}"
        raise InputError(
            where,
            None,
            f"template fails to render: {clip(single_line(str(exc)), 200)}",
            "use only the variables and filters of the built-in comment.md.j2",
            line=getattr(exc, "lineno", None),
        ) from None
