"""`adk-eval-gate ci`: the whole pipeline as the Action runs it, the mode chosen from the event.

* pull_request: run → compare with the baseline → report → one sticky comment → gate (exit code);
* push to the default branch: run → compare with the previous baseline → store these results as the new one; the
  job passes unless `gate.on_push: fail` (it fails only when the baseline could not be stored);
* anywhere else (a laptop, workflow_dispatch): run → compare → the same markdown on stdout and the same files,
  nothing posted.

Every file is written before anything is posted, so a GitHub API failure never loses the run. The job log ends
with the verdict, why, and the comment's link.
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
from .baseline.stores import BaselineStore, LoadOutcome, build_store
from .errors import InputError
from .evalsets.models import Invocation
from .files import write_text_atomic
from .gate import exit_code_for_decision
from .gate.evidence import regression_cases
from .github.client import GitHubClient, GitHubError
from .github.comment import CommentPolicy, create_check_run, publish_comment, report_digest
from .github.context import ActionsContext
from .github.labels import current_labels
from .log import error, in_actions, relative_to_root, repository_root, warn
from .pipeline import run_plan
from .plan import Plan, build_plan, select_cases
from .redaction import child_env
from .report.html import artifacts_url, summary_note, write_report_html
from .report.markdown import render_report
from .report.outputs import annotations, junit_xml, verdict_lines, write_outputs, write_step_summary
from .results.build import write_results
from .results.models import ResultsFile
from .sampling.decider import Decider, has_adaptive_runs
from .shards import only_cases_of, shard_plan, why_not_a_baseline


@dataclass
class CiOptions:
    config: str
    output_dir: str = "adk-eval-gate-out"
    post_comment: bool = True
    labels: list[str] = field(default_factory=list)
    quiet: bool = False
    comment_key: str | None = None
    shard: tuple[int, int] | None = None  # (i, n), 1-based
    # the command line's word over the config's `comment:` section
    comment_mode: str | None = None
    comment_when: str | None = None
    comment_author: str | None = None
    cases: list[str] = field(default_factory=list)  # --cases selectors; a partial run is never a baseline


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


def run_setup(commands: list[str], cwd: Path, pass_env: list[str] | None = None) -> None:
    """The agent's own dependencies (e.g. `pip install -r requirements.txt`), folded into one log group.

    They come from the pull request, so they get none of GitHub's tokens unless `setup_pass_env` names them, and
    their output reaches the log through our (redacting) stdout."""
    env = child_env(pass_env or [])
    for command in commands:
        print(f"::group::setup: {command}", flush=True)
        with subprocess.Popen(command, shell=True, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              stdin=subprocess.DEVNULL, text=True, errors="replace") as process:
            assert process.stdout is not None
            for line in process.stdout:
                sys.stdout.write(line)
            returncode = process.wait()
        sys.stdout.flush()
        print("::endgroup::", flush=True)
        if returncode != 0:
            raise InputError(None, "setup", f"`{shlex.quote(command)}` exited with status {returncode}", "fix the setup command")


def run_ci(options: CiOptions, context: ActionsContext | None = None) -> int:
    context = context or ActionsContext.from_env()
    plan = build_plan(options.config)
    if options.cases:
        plan = select_cases(plan, options.cases)
    if options.shard is not None:
        plan = shard_plan(plan, *options.shard)
    if plan.workflow.settings.setup:
        run_setup(plan.workflow.settings.setup, plan.workflow.base_dir, plan.workflow.settings.setup_pass_env)
    outcome = None
    if _mode(context) != "baseline" and has_adaptive_runs(plan):
        # adaptive runs decide against the baseline the comparison will use: load it before running
        outcome = _load_baseline(plan, context)
    results = run_plan(plan, quiet=options.quiet,
                       decider=Decider(outcome.baseline.results if outcome.baseline else None) if outcome else None)
    return finish(options, plan, results, context, outcome)


def _load_baseline(plan: Plan, context: ActionsContext) -> LoadOutcome:
    return build_store(plan.workflow, context).load()


def finish(options: CiOptions, plan: Plan, results: ResultsFile, context: ActionsContext,
           outcome: LoadOutcome | None = None) -> int:
    """Everything after the agents ran: files first, then the comparison, the report, GitHub, the exit code."""
    out = Path(options.output_dir)
    mode = _mode(context)
    root = repository_root(plan.workflow.base_dir)
    write_results(results, out / "results.json")
    if options.shard is not None:
        write_text_atomic(out / "junit.xml", junit_xml(results, None, plan.workflow.base_dir, root))
        # A shard only runs part of the suite: `adk-eval-gate merge` compares, reports and gates the whole.
        print(f"shard {options.shard[0]}/{options.shard[1]}: {results.summary.total} cases; results in {out / 'results.json'}")
        return 0

    store = build_store(plan.workflow, context)
    if outcome is None:
        outcome = store.load()
    gate = plan.workflow.settings.gate
    max_age = getattr(plan.workflow.settings.baseline, "max_age_days", None)
    notes: list[str] = []
    labels, label_warning = current_labels(context) if mode == "pull_request" else (context.labels, None)
    if label_warning:
        notes.append(label_warning)
    if options.cases and outcome.baseline is not None:
        outcome.baseline.results = only_cases_of(outcome.baseline.results, results)
    comparison = build_comparison(results, outcome, gate, [*labels, *options.labels], max_age_days=max_age)
    write_text_atomic(out / "comparison.json", comparison.model_dump_json(indent=2) + "\n")
    write_text_atomic(out / "junit.xml", junit_xml(results, comparison, plan.workflow.base_dir, root))

    run_url = (f"{context.server_url}/{context.repository}/actions/runs/{context.run_id}"
               if context.repository and context.run_id else None)
    head_sha = ((context.pull_request or {}).get("head") or {}).get("sha") or context.sha or results.git.sha
    expected = _expected_cases(plan)
    markdown = render_report(comparison, results, expected, run_url=run_url, head_sha=head_sha,
                             template_dir=plan.workflow.template_dir, report_url=artifacts_url(run_url))
    write_text_atomic(out / "report.md", markdown)
    write_report_html(out, results, comparison, expected, run_url=run_url, report_url=artifacts_url(run_url))
    key = comment_key(options, plan, root)
    if mode == "pull_request":
        # What the trusted `publish` step of the fork-safe workflow needs; data only, checked again there.
        write_text_atomic(out / "pull-request.json", json.dumps({
            "number": context.pull_request.get("number"), "head_sha": head_sha, "comment_key": key,
            "run_id": context.run_id}) + "\n")

    if comparison.baseline is None:  # said first and loudly: a gate with nothing to compare guards little
        warn(f"no baseline, nothing was compared: {'; '.join(outcome.warnings) or 'no baseline was found'}")
    gating = mode != "baseline" or gate.on_push == "fail"
    baseline_note, baseline_lost = ("", False)
    if mode == "baseline" and options.cases:  # a partial run never replaces the whole suite's baseline
        baseline_note = "baseline not stored: --cases ran only part of the suite"
    elif mode == "baseline" and (why := why_not_a_baseline(results, plan)):
        error(f"the baseline was not stored, so pull requests keep comparing with an older one: {why}")
        baseline_note, baseline_lost = "the baseline was NOT stored", True
    elif mode == "baseline":
        baseline_note, baseline_lost = _store_baseline(store, results)
    comment_url = ""
    if mode == "pull_request" and options.post_comment and context.token and context.repository:
        comment_url = _post(context, int(context.pull_request["number"]), markdown, key, notes,
                            policy=comment_policy(options, plan), failing=comparison.verdict == "fail",
                            digest=report_digest(comparison, results))
    if plan.workflow.settings.report.check_run and mode != "local" and context.token and context.repository and head_sha:
        try:
            create_check_run(GitHubClient(context.api_url, context.token), context.repository, head_sha,
                             plan.workflow.settings.report.check_name, comparison.verdict == "pass" or not gating,
                             comparison.gate.reason, markdown, run_url)
        except GitHubError as exc:
            notes.append(f"the check run was not created: {exc}")
    _github_outputs(results, comparison, plan.workflow.base_dir, root, out, markdown, comment_url)
    if not os.environ.get("GITHUB_STEP_SUMMARY") or mode == "local":
        print(markdown)
    for note in notes:
        warn(note)
    for line in verdict_lines(comparison, results, comment_url=comment_url, baseline_note=baseline_note, gating=gating):
        print(line, flush=True)
    if baseline_lost:
        return exit_code_for_decision("fail")
    return exit_code_for_decision(comparison.verdict if gating else "pass")


def _store_baseline(store: BaselineStore, results: ResultsFile) -> tuple[str, bool]:
    """A line for the log, and whether the baseline was lost (which fails the job: it must keep advancing)."""
    try:
        return f"baseline stored: {store.save(results)}", False
    except GitHubError as exc:
        error(f"the baseline could not be stored, so pull requests keep comparing with an older one: {exc}")
        return "the baseline was NOT stored", True


def _post(context: ActionsContext, number: int, markdown: str, key: str, notes: list[str], *,
          policy: CommentPolicy, failing: bool, digest: str | None) -> str:
    try:
        published = publish_comment(GitHubClient(context.api_url, context.token), context.repository, number, markdown,
                                    key=key, run_id=int(context.run_id or 0),
                                    attempt=int(os.environ.get("GITHUB_RUN_ATTEMPT", "1")), policy=policy,
                                    failing=failing, digest=digest)
    except (GitHubError, ValueError) as exc:
        notes.append(f"the pull request comment was not posted: {exc}")
        return ""
    if published.warning:
        notes.append(published.warning)
    return published.url or ""


def _github_outputs(results: ResultsFile, comparison: Comparison, base_dir: Path, root: Path, out: Path, markdown: str,
                    comment_url: str) -> None:
    summary_path = os.environ.get("GITHUB_STEP_SUMMARY")
    if summary_path:
        write_step_summary(Path(summary_path), markdown + summary_note(out / "report.html"))
    output_path = os.environ.get("GITHUB_OUTPUT")
    if output_path:
        write_outputs(Path(output_path), {
            "passed": "true" if comparison.verdict == "pass" else "false",
            "verdict": comparison.verdict,
            "regressions": str(sum(s.verdict == "regressed" for s in [*comparison.pooled, *comparison.summaries])),
            "regressed-cases": str(len(regression_cases(comparison))),  # the comment's "cases behind the regressions"
            "failed-cases": str(results.summary.failed + results.summary.error + results.summary.not_run),
            "results-path": str(out / "results.json"),
            "comparison-path": str(out / "comparison.json"),
            "report-path": str(out / "report.md"),
            "html-report-path": str(out / "report.html"),
            "junit-path": str(out / "junit.xml"),
            "comment-url": comment_url,
        })
    if in_actions():
        for line in annotations(results, comparison, base_dir, root):
            print(line)


def comment_key(options: CiOptions, plan: Plan, root: Path) -> str:
    """The key that keeps one comment per config: two `eval-gate.yml` in different folders get two comments."""
    return (options.comment_key or plan.workflow.settings.comment.key
            or relative_to_root(plan.workflow.path, root) or plan.workflow.path.name)


def comment_policy(options: CiOptions, plan: Plan) -> CommentPolicy:
    section = plan.workflow.settings.comment
    return CommentPolicy(mode=options.comment_mode or section.mode, when=options.comment_when or section.when,
                         author=options.comment_author or section.author)
