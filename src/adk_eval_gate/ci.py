"""`adk-eval-gate ci`: the whole pipeline as the Action runs it, the mode chosen from the event.

* pull_request: run → compare with the baseline → report → one sticky comment → gate (exit code);
* push to the default branch: run → compare with the previous baseline → store these results as the new one;
* anywhere else (a laptop, workflow_dispatch): run → compare → the same markdown on stdout and the same files,
  nothing posted.

Every file is written before anything is posted, so a GitHub API failure never loses the run.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

from .baseline import build_comparison
from .baseline.models import Comparison
from .baseline.stores import LoadOutcome, build_store
from .errors import InputError
from .evalsets.models import Invocation
from .files import write_text_atomic
from .gate import exit_code_for_decision
from .gate.evidence import regression_cases
from .github.client import GitHubClient, GitHubError
from .github.comment import create_check_run, publish_comment
from .github.context import ActionsContext
from .pipeline import run_plan
from .plan import Plan, build_plan
from .report.markdown import render_report
from .report.outputs import annotations, junit_xml, write_outputs, write_step_summary
from .results.build import write_results
from .results.models import ResultsFile
from .sampling.decider import Decider, has_adaptive_runs
from .shards import shard_plan


@dataclass
class CiOptions:
    config: str
    output_dir: str = "adk-eval-gate-out"
    post_comment: bool = True
    labels: list[str] = field(default_factory=list)
    quiet: bool = False
    comment_key: str | None = None
    shard: tuple[int, int] | None = None  # (i, n), 1-based


def _mode(context: ActionsContext) -> str:
    if context.pull_request is not None:
        return "pull_request"
    default = (context.event.get("repository") or {}).get("default_branch")
    if context.event_name == "push" and default and context.ref == f"refs/heads/{default}":
        return "baseline"
    return "local"


def _expected_cases(plan: Plan) -> dict[tuple[str, str, str], list[Invocation]]:
    return {
        (agent.name, eval_set.eval_set_id, case.eval_id): list(case.conversation or [])
        for agent in plan.agents for eval_set in agent.eval_sets for case in eval_set.file.eval_set.eval_cases
    }


def run_setup(commands: list[str], cwd: Path) -> None:
    """The agent's own dependencies (e.g. `pip install -r requirements.txt`), folded into one log group."""
    for command in commands:
        print(f"::group::setup: {command}", flush=True)
        done = subprocess.run(command, shell=True, cwd=cwd, check=False)
        print("::endgroup::", flush=True)
        if done.returncode != 0:
            raise InputError(None, "setup", f"`{shlex.quote(command)}` exited with status {done.returncode}", "fix the setup command")


def run_ci(options: CiOptions, context: ActionsContext | None = None) -> int:
    context = context or ActionsContext.from_env()
    plan = build_plan(options.config)
    if options.shard is not None:
        plan = shard_plan(plan, *options.shard)
    if plan.workflow.settings.setup:
        run_setup(plan.workflow.settings.setup, plan.workflow.base_dir)
    outcome = None
    if _mode(context) != "baseline" and has_adaptive_runs(plan):
        # adaptive runs decide against the baseline the comparison will use: load it before running
        outcome = _load_baseline(plan, context)
    results = run_plan(plan, quiet=options.quiet,
                       decider=Decider(outcome.baseline.results if outcome.baseline else None) if outcome else None)
    return finish(options, plan, results, context, outcome)


def _load_baseline(plan: Plan, context: ActionsContext) -> LoadOutcome:
    if plan.workflow.settings.baseline.store == "none":
        return LoadOutcome(None, [])
    return build_store(plan.workflow, context).load()


def finish(options: CiOptions, plan: Plan, results: ResultsFile, context: ActionsContext,
           outcome: LoadOutcome | None = None) -> int:
    """Everything after the agents ran: files first, then the comparison, the report, GitHub, the exit code."""
    out = Path(options.output_dir)
    mode = _mode(context)
    write_results(results, out / "results.json")
    if options.shard is not None:
        write_text_atomic(out / "junit.xml", junit_xml(results))
        # A shard only runs part of the suite: `adk-eval-gate merge` compares, reports and gates the whole.
        print(f"shard {options.shard[0]}/{options.shard[1]}: {results.summary.total} cases; results in {out / 'results.json'}")
        return 0

    store = build_store(plan.workflow, context)
    if outcome is None:
        outcome = _load_baseline(plan, context)
    gate = plan.workflow.settings.gate
    max_age = getattr(plan.workflow.settings.baseline, "max_age_days", None)
    comparison = build_comparison(results, outcome, gate, [*context.labels, *options.labels], max_age_days=max_age)
    write_text_atomic(out / "comparison.json", comparison.model_dump_json(indent=2) + "\n")
    write_text_atomic(out / "junit.xml", junit_xml(results, comparison))

    run_url = (f"{context.server_url}/{context.repository}/actions/runs/{context.run_id}"
               if context.repository and context.run_id else None)
    head_sha = ((context.pull_request or {}).get("head") or {}).get("sha") or context.sha or results.git.sha
    markdown = render_report(comparison, results, _expected_cases(plan), run_url=run_url, head_sha=head_sha,
                             template_dir=plan.workflow.template_dir)
    write_text_atomic(out / "report.md", markdown)
    key = options.comment_key or plan.workflow.path.name
    if mode == "pull_request":
        # What the trusted `publish` step of the fork-safe workflow needs; data only, checked again there.
        write_text_atomic(out / "pull-request.json", json.dumps({
            "number": context.pull_request.get("number"), "head_sha": head_sha, "comment_key": key,
            "run_id": context.run_id}) + "\n")

    notes: list[str] = []
    if mode == "baseline":
        try:
            notes.append(f"baseline stored: {store.save(results)}")
        except GitHubError as exc:
            notes.append(f"warning: the baseline could not be stored: {exc}")
    comment_url = ""
    if mode == "pull_request" and options.post_comment and context.token and context.repository:
        comment_url = _post(context, int(context.pull_request["number"]), markdown, key, notes)
    if plan.workflow.settings.report.check_run and mode != "local" and context.token and context.repository and head_sha:
        try:
            create_check_run(GitHubClient(context.api_url, context.token), context.repository, head_sha,
                             plan.workflow.settings.report.check_name, comparison.verdict == "pass",
                             comparison.gate.reason, markdown, run_url)
        except GitHubError as exc:
            notes.append(f"warning: the check run was not created: {exc}")
    _github_outputs(results, comparison, plan.workflow.base_dir, out, markdown, comment_url)
    if not os.environ.get("GITHUB_STEP_SUMMARY") or mode == "local":
        print(markdown)
    for note in notes:
        print(note, file=sys.stderr)
    return exit_code_for_decision(comparison.verdict)


def _post(context: ActionsContext, number: int, markdown: str, key: str, notes: list[str], run_id: str | None = None) -> str:
    try:
        published = publish_comment(GitHubClient(context.api_url, context.token), context.repository, number, markdown,
                                    key=key, run_id=int(run_id or context.run_id or 0),
                                    attempt=int(os.environ.get("GITHUB_RUN_ATTEMPT", "1")))
    except (GitHubError, ValueError) as exc:
        notes.append(f"warning: the pull request comment was not posted: {exc}")
        return ""
    if published.warning:
        notes.append(f"warning: {published.warning}")
    return published.url or ""


def _github_outputs(results: ResultsFile, comparison: Comparison, base_dir: Path, out: Path, markdown: str,
                    comment_url: str) -> None:
    summary_path = os.environ.get("GITHUB_STEP_SUMMARY")
    if summary_path:
        write_step_summary(Path(summary_path), markdown)
    output_path = os.environ.get("GITHUB_OUTPUT")
    if output_path:
        write_outputs(Path(output_path), {
            "passed": "true" if comparison.verdict == "pass" else "false",
            "verdict": comparison.verdict,
            "regressions": str(sum(s.verdict == "regressed" for s in [*comparison.pooled, *comparison.summaries])),
            "regressed-cases": str(len(regression_cases(comparison))),  # the comment's "cases behind the regressions"
            "failed-cases": str(results.summary.failed + results.summary.error),
            "results-path": str(out / "results.json"),
            "comparison-path": str(out / "comparison.json"),
            "report-path": str(out / "report.md"),
            "junit-path": str(out / "junit.xml"),
            "comment-url": comment_url,
        })
    if os.environ.get("GITHUB_ACTIONS") == "true":
        workspace = Path(os.environ.get("GITHUB_WORKSPACE", "."))
        for line in annotations(results, comparison, base_dir, workspace):
            print(line)
