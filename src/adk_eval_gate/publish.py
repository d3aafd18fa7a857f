"""`adk-eval-gate publish`: the trusted half of the fork-safe two-workflow pattern.

A pull request from a fork runs the evals in an untrusted `pull_request` workflow without secrets and uploads
`adk-eval-gate-out/` as an artifact. A `workflow_run` workflow, which has a write token but never checks out or
runs the fork's code, downloads it and calls `publish`. Everything in the artifact is data from untrusted code:
the results and comparison are validated by their schemas and the report is rendered again from them (so every
string is escaped by us), and the pull request number is only used if GitHub confirms that pull request's head
is the commit the `workflow_run` event names.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from pydantic import ValidationError

from .baseline.models import Comparison
from .errors import InputError
from .files import load_json
from .gate import exit_code_for_decision
from .github.client import GitHubClient, GitHubError
from .github.comment import publish_comment
from .github.context import ActionsContext
from .report.markdown import render_report
from .report.outputs import write_step_summary
from .results.build import read_results


def run_publish(directory: str, comment_key: str | None = None, context: ActionsContext | None = None) -> int:
    context = context or ActionsContext.from_env()
    folder = Path(directory)
    results = read_results(folder / "results.json")
    try:
        comparison = Comparison.model_validate(load_json(folder / "comparison.json", "comparison file"))
    except ValidationError as exc:
        raise InputError(folder / "comparison.json", None, f"is not a comparison file: {exc.errors()[0]['msg']}",
                         "pass the artifact of an adk-eval-gate run") from None
    pr = load_json(folder / "pull-request.json", "pull request file")
    number = pr.get("number") if isinstance(pr, dict) else None
    if not isinstance(number, int) or isinstance(number, bool) or number <= 0:
        raise InputError(folder / "pull-request.json", "number", "is not a pull request number", "pass the artifact of a pull_request run")
    trusted_head = (context.event.get("workflow_run") or {}).get("head_sha")
    run = context.event.get("workflow_run") or {}
    if not (context.repository and context.token and trusted_head):
        raise InputError(None, "GITHUB_EVENT_PATH", "publish needs a workflow_run event, GITHUB_REPOSITORY and a token",
                         "call it from the workflow_run workflow shown in the README")
    client = GitHubClient(context.api_url, context.token)
    try:
        head = client.get_json(f"/repos/{context.repository}/pulls/{number}").get("head", {}).get("sha")
    except GitHubError as exc:
        print(f"error: cannot read pull request #{number}: {exc}", file=sys.stderr)
        return 1
    if head != trusted_head:
        print(f"error: pull request #{number} is at {str(head)[:12]}, not at the commit this run evaluated "
              f"({trusted_head[:12]}); nothing was posted", file=sys.stderr)
        return 1
    run_url = run.get("html_url") if isinstance(run.get("html_url"), str) and run["html_url"].startswith("https://") else None
    markdown = render_report(comparison, results, {}, run_url=run_url, head_sha=trusted_head)
    key = comment_key or str(pr.get("comment_key") or "eval-gate")
    outcome = publish_comment(client, context.repository, number, markdown, key=key, run_id=int(run.get("id") or 0),
                              attempt=int(run.get("run_attempt") or 1))
    if outcome.warning:
        print(f"warning: {outcome.warning}", file=sys.stderr)
    if os.environ.get("GITHUB_STEP_SUMMARY"):
        write_step_summary(Path(os.environ["GITHUB_STEP_SUMMARY"]), markdown)
    print(json.dumps({"comment_url": outcome.url, "action": outcome.action}))
    return exit_code_for_decision(comparison.verdict)
