"""The step's outputs for later workflow steps, and the annotations that put failing cases on their files."""

from __future__ import annotations

from pathlib import Path

from adk_eval_gate.baseline.comparison_format import Comparison
from adk_eval_gate.gate.evidence import regression_cases
from adk_eval_gate.github.context import ActionsContext
from adk_eval_gate.github.workflow_commands import in_actions
from adk_eval_gate.report.outputs import annotation_lines, write_outputs
from adk_eval_gate.results.results_format import ResultsFile


def github_outputs(
    results: ResultsFile,
    comparison: Comparison,
    context: ActionsContext,
    base_dir: Path,
    root: Path,
    out: Path,
    comment_url: str,
) -> None:
    if context.output:
        summary = results.summary
        regressions = sum(s.verdict == "regressed" for s in [*comparison.pooled, *comparison.summaries])
        write_outputs(
            Path(context.output),
            {
                "passed": "true" if comparison.verdict == "pass" else "false",
                "verdict": comparison.verdict,
                "regressions": str(regressions),
                # the comment's "cases behind the regressions"
                "regressed-cases": str(len(regression_cases(comparison))),
                "failed-cases": str(summary.failed + summary.error + summary.not_run),
                "results-path": str(out / "results.json"),
                "comparison-path": str(out / "comparison.json"),
                "report-path": str(out / "report.md"),
                "html-report-path": str(out / "report.html"),
                "junit-path": str(out / "junit.xml"),
                "comment-url": comment_url,
            },
        )
    if in_actions():
        for line in annotation_lines(results, comparison, base_dir, root):
            print(line)
