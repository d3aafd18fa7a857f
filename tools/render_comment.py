"""Renders the example's pull-request comment (with a regression) through GitHub's markdown renderer to HTML,
for the README's screenshot:  python tools/render_comment.py OUT.html  then screenshot it with headless Chromium."""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
from pathlib import Path

import cmarkgfm

from adk_eval_gate.baseline.stores import LoadedBaseline, LoadOutcome, identity_of
from adk_eval_gate.config.models import GateSettings
from adk_eval_gate.gate.decision import build_comparison
from adk_eval_gate.report.markdown import render_report
from adk_eval_gate.run.pipeline import run_plan
from adk_eval_gate.run.plan import build_plan

ROOT = Path(__file__).resolve().parents[1]
STYLE = """body{font-family:-apple-system,Segoe UI,Helvetica,Arial,sans-serif;font-size:14px;
line-height:1.5;color:#1f2328;max-width:900px;margin:16px;padding:16px 24px;border:1px solid #d1d9e0;border-radius:6px}
table{border-collapse:collapse;margin:8px 0}th,td{border:1px solid #d1d9e0;padding:4px 10px}th{background:#f6f8fa}
code,pre{font-family:ui-monospace,Menlo,monospace;font-size:12px;background:#f6f8fa}pre{padding:10px;border-radius:6px}
details{margin:6px 0}summary{cursor:pointer;font-weight:600}
blockquote{color:#59636e;border-left:3px solid #d1d9e0;margin:0;padding-left:10px}"""


def main(out: str) -> None:
    work = Path(tempfile.mkdtemp())
    shutil.copytree(
        ROOT / "examples" / "hello_world", work / "ex", ignore=shutil.ignore_patterns("__pycache__", ".adk")
    )
    config = work / "ex" / "eval-gate.yml"
    config.write_text(config.read_text().replace("num_runs: 1", "num_runs: 3"))
    baseline = run_plan(build_plan(config), quiet=True)
    # the pull request: the agent now answers the d6 roll with the wrong tool arguments
    evalset = json.loads((work / "ex" / "evals" / "dice.evalset.json").read_text())
    for case in evalset["eval_cases"]:
        for turn in case["conversation"]:
            if "100 sided" in turn["user_content"]["parts"][0]["text"] or case["eval_id"] == "roll_6":
                turn["user_content"]["parts"][0]["text"] = turn["user_content"]["parts"][0]["text"].replace(
                    "sided", "faced"
                )
    (work / "ex" / "evals" / "dice.evalset.json").write_text(json.dumps(evalset))
    plan = build_plan(config)
    current = run_plan(plan, quiet=True)
    for s in current.eval_sets:
        for c in s.cases:
            c.case_hash = next(b.case_hash for b in baseline.eval_sets[0].cases if b.eval_id == c.eval_id)
    comparison = build_comparison(
        current,
        LoadOutcome(LoadedBaseline(baseline, identity_of(baseline, "branch adk-eval-gate-data"))),
        GateSettings(),
    )
    markdown = render_report(
        comparison,
        current,
        plan.expected_cases(),
        run_url="https://github.com/acme/agents/actions/runs/1",
        head_sha="3f2a9c1d5e7b",
    )
    # GitHub keeps <details>/<summary> (the only raw HTML the report itself writes); agent text is escaped anyway.
    html = cmarkgfm.github_flavored_markdown_to_html(markdown, options=cmarkgfm.cmark.Options.CMARK_OPT_UNSAFE)
    html = html.replace("<details>", "<details open>", 1)
    Path(out).write_text(f"<!doctype html><meta charset=utf-8><style>{STYLE}</style><body>{html}</body>")


if __name__ == "__main__":
    main(sys.argv[1])
