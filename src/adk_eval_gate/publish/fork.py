"""`adk-eval-gate publish`: the trusted half of the fork-safe two-workflow pattern.

A pull request from a fork runs the evals in an untrusted `pull_request` workflow without secrets and uploads
`adk-eval-gate-out/` as an artifact. A `workflow_run` workflow, which has a write token but never runs the fork's
code, checks out the base branch, downloads the artifact and calls `publish --config <the base branch's config>`.

The fork controls everything in the artifact, so only its scores are used: the results file, validated by its
schema. The comparison and the verdict are computed again here with the base branch's config (its `gate:`
policy, which a fork can edit in its own copy) and its baseline store; the artifact's `comparison.json` and
`report.md` are never used (a disagreeing comparison only earns a warning). The pull request number, the
labels, the comment key and every string outside code blocks come from the trusted side: the `workflow_run`
event, GitHub's API (the pull request must be at the commit the run evaluated) and the config or `--comment-key`.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from pathlib import Path

from pydantic import ValidationError

from adk_eval_gate.baseline.comparison_format import Comparison, Override
from adk_eval_gate.baseline.history import load_history
from adk_eval_gate.baseline.stores import build_store
from adk_eval_gate.config.loader import Workflow, load_workflow
from adk_eval_gate.config.workflow_settings import max_age_days
from adk_eval_gate.core.clip import short_sha
from adk_eval_gate.core.errors import InputError, format_loc
from adk_eval_gate.core.files import load_json, write_text_atomic
from adk_eval_gate.core.json_types import JsonObject
from adk_eval_gate.core.paths import repository_root
from adk_eval_gate.gate.comparison_file import build_comparison
from adk_eval_gate.gate.exit_codes import exit_code_for_decision
from adk_eval_gate.github import workflow_commands as log
from adk_eval_gate.github.client import GitHubClient, GitHubError
from adk_eval_gate.github.context import ActionsContext, WorkflowRunEvent
from adk_eval_gate.handshake.settings import comment_key, comment_policy
from adk_eval_gate.handshake.status import PullRequestRun, acceptance_for, read_sticky, reported_data
from adk_eval_gate.publish.comment import report_digest
from adk_eval_gate.publish.deliver import CheckTarget, CommentTarget, Destinations, deliver
from adk_eval_gate.report.html import artifacts_url, summary_note, write_report_html
from adk_eval_gate.report.markdown import CommentPlace, render_report
from adk_eval_gate.results.build import read_results
from adk_eval_gate.results.results_format import ResultsFile

PULL_REQUEST_EVENTS = ("pull_request", "pull_request_target")


def _workflow_run(context: ActionsContext) -> tuple[JsonObject, str]:
    """The pull request's workflow run, and the repository publish posts to (both required)."""
    try:
        WorkflowRunEvent.model_validate(context.event)
    except ValidationError as exc:
        first = exc.errors()[0]
        raise InputError(
            None,
            f"GITHUB_EVENT_PATH: {format_loc(first['loc'])}",
            f"{first['msg'].lower()} in the workflow_run event",
            "call publish from the workflow_run workflow shown in docs/trust.md",
        ) from None
    run = context.event["workflow_run"]
    if run["event"] not in PULL_REQUEST_EVENTS:
        raise InputError(
            None,
            "GITHUB_EVENT_PATH: workflow_run.event",
            f"is {run['event']!r}, not a pull request's run",
            "guard the job with `if: github.event.workflow_run.event == 'pull_request'`",
        )
    if not (context.repository and context.token):
        raise InputError(
            None,
            "GITHUB_REPOSITORY",
            "publish needs GITHUB_REPOSITORY and a token (GITHUB_TOKEN)",
            "pass `GITHUB_TOKEN: ${{ github.token }}` to the step",
        )
    return run, context.repository


def _candidate_numbers(run: JsonObject, folder: Path) -> list[int]:
    """The event's own pull requests first (GitHub leaves the list empty for forks), then the artifact's claim;
    either is only a candidate until the API confirms it."""
    numbers = [
        pr["number"]
        for pr in run.get("pull_requests") or []
        if isinstance(pr, dict) and isinstance(pr.get("number"), int) and pr["number"] > 0
    ]
    path = folder / "pull-request.json"
    if path.exists():
        claimed = load_json(path, "pull request file")
        number = claimed.get("number") if isinstance(claimed, dict) else None
        if isinstance(number, int) and not isinstance(number, bool) and number > 0 and number not in numbers:
            numbers.append(number)
    if not numbers:
        raise InputError(
            path,
            "number",
            "names no pull request, and the workflow_run event lists none",
            "pass the artifact of an adk-eval-gate pull_request run",
        )
    return numbers


def _verified_pull(client: GitHubClient, repository: str, run: JsonObject, numbers: list[int]) -> JsonObject | None:
    """The pull request whose head is the commit the untrusted run evaluated, as GitHub (not the artifact) says."""
    for number in numbers:
        pull = client.get_json(f"/repos/{repository}/pulls/{number}")
        if isinstance(pull, dict) and (pull.get("head") or {}).get("sha") == run["head_sha"]:
            return pull
    return None


def _trusted_comparison(
    results: ResultsFile, workflow: Workflow, context: ActionsContext, pull: JsonObject, acceptance: Override | None
) -> Comparison:
    """The base branch's policy and baseline over the fork's scores; the labels as GitHub has them now."""
    base = pull.get("base") or {}
    pull_context = dataclasses.replace(
        context,
        event={"pull_request": pull, "repository": context.event.get("repository") or {}},
        base_ref=base.get("ref") or None,
    )
    store = build_store(workflow, pull_context)
    outcome = store.load()
    labels = [label.get("name", "") for label in pull.get("labels") or [] if isinstance(label, dict)]
    return build_comparison(
        results,
        outcome,
        workflow.settings.gate,
        labels,
        max_age_days=max_age_days(workflow.settings.baseline),
        acceptance=acceptance,
        history=load_history(workflow, pull_context, outcome, store),
    )


def _untrusted_disagreement(folder: Path, trusted: Comparison) -> str | None:
    path = folder / "comparison.json"
    if not path.exists():
        return None
    try:
        claimed = Comparison.model_validate(load_json(path, "comparison file")).verdict
    except (InputError, ValidationError):
        return "the artifact's comparison.json is not a comparison file; it was ignored"
    if claimed != trusted.verdict:
        return (
            f"the artifact's comparison.json says {claimed!r} but the base branch's policy and baseline say "
            f"{trusted.verdict!r}; the artifact's comparison was ignored"
        )
    return None


@dataclass(frozen=True)
class _Verified:
    """The fork's run as the trusted side confirmed it: the workflow run, the pull request at its head, our
    comment's key and what our comment kept."""

    run: JsonObject
    repository: str
    number: int
    key: str
    conversation: PullRequestRun
    run_url: str | None  # the untrusted run's page, when it is on this server


def run_publish(
    directory: str,
    config: str,
    comment_key_option: str | None = None,
    *,
    context: ActionsContext,
    output_dir: str = "adk-eval-gate-published",
) -> int:
    """Verify the pull request → compare with the trusted side's policy → write the files → deliver → tell."""
    folder = Path(directory)
    workflow = load_workflow(config)
    run, repository = _workflow_run(context)
    results = read_results(folder / "results.json")
    numbers = _candidate_numbers(run, folder)
    client = context.client()
    pull = _pull_at_head(client, repository, run, numbers)
    if pull is None:
        return 1
    verified = _verify(client, context, workflow, run, pull, comment_key_option)
    acceptance = acceptance_for(verified.conversation, run["head_sha"])
    comparison = _trusted_comparison(results, workflow, context, pull, acceptance)
    if warning := _untrusted_disagreement(folder, comparison):
        log.warn(warning)
    out = Path(output_dir)  # not inside the artifact's folder, whose layout the fork chose
    markdown = _write_files(out, workflow, comparison, results, verified, context.run_url)
    where = _destinations(verified, workflow, comparison, results, context, out)
    outcome = deliver(client, repository, markdown, where, failing=comparison.verdict == "fail")
    for note in outcome.notes:
        log.warn(note)
    print(
        json.dumps(
            {
                "pull_request": verified.number,
                "verdict": comparison.verdict,
                "comment_url": outcome.comment_url or None,
                "action": outcome.action,
            }
        )
    )
    return exit_code_for_decision(comparison.verdict)


def _pull_at_head(client: GitHubClient, repository: str, run: JsonObject, numbers: list[int]) -> JsonObject | None:
    """The verified pull request, or None with the reason in the log (nothing is posted)."""
    try:
        pull = _verified_pull(client, repository, run, numbers)
    except GitHubError as exc:
        log.error(f"cannot read the pull request: {exc}; nothing was posted")
        return None
    if pull is None:
        log.error(
            f"no pull request among #{', #'.join(map(str, numbers))} is at the commit this run evaluated "
            f"({short_sha(run['head_sha'])}); nothing was posted"
        )
    return pull


def _verify(
    client: GitHubClient,
    context: ActionsContext,
    workflow: Workflow,
    run: JsonObject,
    pull: JsonObject,
    comment_key_option: str | None,
) -> _Verified:
    number, repository = int(pull["number"]), context.repository or ""
    # Keyed as `ci` keys it, so a fork's comment and a same-repository one are one; every setting from the trusted side.
    root = repository_root(workflow.base_dir, context.workspace)
    key = comment_key(comment_key_option, workflow, root, configured=workflow.settings.comment.key)
    conversation = PullRequestRun()
    try:  # an `/eval accept` for this commit counts here too, and our comment keeps the acceptances
        conversation.sticky = read_sticky(client, repository, number, key, workflow.settings.comment.author)
    except GitHubError as exc:
        log.warn(f"the pull request comment could not be read, so no /eval accept could count: {exc}")
    html_url = run.get("html_url")
    run_url = html_url if isinstance(html_url, str) and html_url.startswith(f"{context.server_url}/") else None
    return _Verified(run, repository, number, key, conversation, run_url)


def _write_files(
    out: Path,
    workflow: Workflow,
    comparison: Comparison,
    results: ResultsFile,
    verified: _Verified,
    own_run: str | None,
) -> str:
    """comparison.json, report.md and the page, from the trusted comparison; returns the markdown.
    `own_run`: the page this comment links is the one this trusted run renders and uploads, never the fork's."""
    markdown = render_report(
        comparison,
        results,
        {},
        CommentPlace(
            run_url=verified.run_url,
            head_sha=verified.run["head_sha"],
            template_dir=workflow.template_dir,
            report_url=artifacts_url(own_run),
        ),
    )
    write_text_atomic(out / "comparison.json", comparison.model_dump_json(indent=2) + "\n")
    write_text_atomic(out / "report.md", markdown)
    write_report_html(out, results, comparison, run_url=verified.run_url, report_url=artifacts_url(own_run))
    return markdown


def _destinations(
    verified: _Verified,
    workflow: Workflow,
    comparison: Comparison,
    results: ResultsFile,
    context: ActionsContext,
    out: Path,
) -> Destinations:
    """Our comment (required: it is the command's whole job), the check run, the step summary."""
    run, conversation = verified.run, verified.conversation
    given = run.get("run_attempt")
    attempt = given if isinstance(given, int) else 1
    check = None
    if workflow.settings.report.check_run:
        check = CheckTarget(
            workflow.settings.report.check_name, run["head_sha"], comparison.verdict == "pass", comparison.gate.reason
        )
    sticky = conversation.sticky
    comment = CommentTarget(
        verified.number,
        verified.key,
        run["id"],
        attempt,
        comment_policy(workflow, author=workflow.settings.comment.author),  # `--config`: the base branch's
        report_digest(comparison, results),
        data=reported_data(conversation, run["head_sha"]),
        author=sticky.author if sticky else None,
        known=sticky.ours if sticky else None,
    )
    summary = summary_note(out / "report.html")
    return Destinations(comment, check, verified.run_url, context.step_summary, summary, comment_required=True)
