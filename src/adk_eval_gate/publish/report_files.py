"""The write step of a report: the files a run leaves in its output folder after the comparison (comparison.json,
junit.xml, report.md, report.html, and a pull request's hand-off to the fork-safe `publish` step). Files come before
GitHub: an API that fails later never loses them. They are written together (all or none), each marked with the
results' run (report/run_marks.py), so a folder never holds the reports of two runs."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import cast

from adk_eval_gate.baseline.comparison_format import Comparison
from adk_eval_gate.baseline.history import HistoryState
from adk_eval_gate.baseline.history.trend import trend_data
from adk_eval_gate.core.files import replace_together
from adk_eval_gate.evalsets.adk_eval_schema import Invocation
from adk_eval_gate.publish.run_value import PublishRun
from adk_eval_gate.report.html import artifacts_url, render_html
from adk_eval_gate.report.markdown import CommentPlace, render_report
from adk_eval_gate.report.outputs import junit_xml
from adk_eval_gate.report.run_marks import mark_html, mark_junit, mark_markdown


@dataclass(frozen=True)
class Handoff:
    """What the trusted `publish` step of the fork-safe workflow needs; data only, checked again there."""

    number: object  # as the event has it: `publish` checks it against GitHub
    head_sha: str | None
    comment_key: str
    run_id: str | None


def write_report_files(
    run: PublishRun, comparison: Comparison, *, history: HistoryState | None, note: str, handoff: Handoff | None
) -> str:
    """The report's markdown, as written to report.md (the comment and the step summary show the same)."""
    out, plan, results, head_sha = run.out, run.plan, run.results, run.head_sha
    workflow, run_id = plan.workflow, results.run_id
    comparison = comparison.model_copy(update={"run_id": run_id})
    files: list[tuple[Path, str | bytes]] = [
        (out / "comparison.json", comparison.model_dump_json(indent=2) + "\n"),
        (out / "junit.xml", mark_junit(junit_xml(results, comparison, workflow.base_dir, run.root), run_id)),
    ]
    run_url, expected = run.context.run_url, plan.expected_cases()
    # a CaseKey is a (agent, eval set, case) tuple; the page's signature names the plain tuple, and Mapping's keys
    # are invariant to mypy
    by_tuple = cast("Mapping[tuple[str, str, str], list[Invocation]]", expected)
    report_url = artifacts_url(run_url)
    markdown = render_report(
        comparison,
        results,
        expected,
        CommentPlace(
            run_url=run_url, head_sha=head_sha, template_dir=workflow.template_dir, report_url=report_url, note=note
        ),
    )
    files.append((out / "report.md", mark_markdown(markdown, run_id)))
    trend = trend_data(history.history) if history is not None and history.history is not None else None
    page = render_html(results, comparison, by_tuple, trend, run_url=run_url, report_url=report_url)
    files.append((out / "report.html", mark_html(page, run_id)))
    if handoff is not None:
        fields = {"number": handoff.number, "head_sha": handoff.head_sha, "comment_key": handoff.comment_key,
                  "run_id": handoff.run_id, "results_run_id": run_id}  # fmt: skip
        files.append((out / "pull-request.json", json.dumps(fields) + "\n"))
    out.mkdir(parents=True, exist_ok=True)
    replace_together(files)
    return markdown
