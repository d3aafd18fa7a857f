"""Everything after the agents ran, for `ci` and `merge`: files first, then the comparison, the report, GitHub,
the exit code. The job log ends with the verdict, why, and the comment's link."""

from __future__ import annotations

import dataclasses
import json
import os
import sys
from pathlib import Path

from adk_eval_gate.baseline.history import FILE_NAME as HISTORY_FILE
from adk_eval_gate.baseline.history import HistoryState, load_history, next_history
from adk_eval_gate.baseline.history.trend import trend_data
from adk_eval_gate.baseline.stores import BaselineStore, LoadOutcome, build_store
from adk_eval_gate.config.loader import Workflow
from adk_eval_gate.core.errors import WriteError
from adk_eval_gate.core.files import write_text_atomic
from adk_eval_gate.core.paths import repository_root
from adk_eval_gate.gate.decision import GatedComparison, gate_comparison
from adk_eval_gate.gate.exit_codes import exit_code_for_decision
from adk_eval_gate.gate.policy import name_who_labelled
from adk_eval_gate.github.client import GitHubClient, GitHubError
from adk_eval_gate.github.context import ActionsContext
from adk_eval_gate.github.conversation import label_added
from adk_eval_gate.github.labels import UNCONFIRMED, current_labels
from adk_eval_gate.github.workflow_commands import error, warn
from adk_eval_gate.publish.comment import report_digest
from adk_eval_gate.publish.deliver import CheckTarget, CommentTarget, deliver
from adk_eval_gate.publish.outputs import github_outputs
from adk_eval_gate.publish.settings import PublishOptions, comment_key, comment_policy
from adk_eval_gate.publish.status import PullRequestRun, acceptance_for, read_sticky, reported_data
from adk_eval_gate.publish.trusted import TrustedSettings, trusted_settings
from adk_eval_gate.report.console import render_comparison
from adk_eval_gate.report.html import artifacts_url, summary_note, write_report_html
from adk_eval_gate.report.markdown import render_report
from adk_eval_gate.report.notes import comparison_file
from adk_eval_gate.report.outputs import junit_xml, verdict_lines
from adk_eval_gate.results.agents_cli_traces import write_traces
from adk_eval_gate.results.build import write_results
from adk_eval_gate.results.models import ResultsFile
from adk_eval_gate.run.agents_cli_plan import agents_cli_cases
from adk_eval_gate.run.plan import Plan
from adk_eval_gate.run.shards import only_cases_of, why_not_a_baseline


def mode_of(context: ActionsContext) -> str:
    if context.pull_request is not None:
        return "pull_request"
    if context.event_name == "issue_comment":  # `/eval`: a pull request's run, once the command is allowed
        return "comment"
    default = (context.event.get("repository") or {}).get("default_branch")
    if context.event_name == "push" and default and context.ref == f"refs/heads/{default}":
        return "baseline"
    return "local"


def finish(
    options: PublishOptions,
    plan: Plan,
    results: ResultsFile,
    context: ActionsContext,
    outcome: LoadOutcome | None = None,
    conversation: PullRequestRun | None = None,
) -> int:
    """`conversation`: what a pull request's run learnt when it started (our comment, an `/eval` command)."""
    try:
        return _finish(options, plan, results, context, outcome, conversation)
    except WriteError as exc:
        # With the artifact store the output folder is the store: the upload step must not carry this run's
        # results as the new baseline without the history (or the other files) it should have come with.
        artifact = plan.workflow.settings.baseline.store == "artifact" and options.shard is None
        if mode_of(context) == "baseline" and artifact:
            raise exc.also(_withdraw(Path(options.output_dir) / "results.json")) from None
        raise


def _withdraw(results: Path) -> str:
    """results.json renamed out of the artifact store's sight (it takes *.json files), kept for whoever looks."""
    aside = results.with_name(results.name + ".unrecorded")
    try:
        os.replace(results, aside)
    except FileNotFoundError:
        return ""
    except OSError as exc:
        return f"{results} could not be moved aside ({exc.strerror or exc}): delete it before the upload step"
    return f"{results} was moved to {aside.name}, so that the artifact carries no baseline without its history"


def _finish(
    options: PublishOptions,
    plan: Plan,
    results: ResultsFile,
    context: ActionsContext,
    outcome: LoadOutcome | None,
    conversation: PullRequestRun | None,
) -> int:
    out = Path(options.output_dir)
    mode = mode_of(context)
    workflow = plan.workflow
    root = repository_root(workflow.base_dir, context.workspace)
    write_results(results, out / "results.json")
    write_traces(results, agents_cli_cases(plan), out)  # agents-cli's format, for `agents-cli eval grade`
    if options.shard is not None:
        write_text_atomic(out / "junit.xml", junit_xml(results, None, workflow.base_dir, root))
        # A shard only runs part of the suite: `adk-eval-gate merge` compares, reports and gates the whole.
        print(
            f"shard {options.shard[0]}/{options.shard[1]}: {results.summary.total} cases; "
            f"results in {out / 'results.json'}"
        )
        return 0

    store = build_store(workflow, context)
    if outcome is None:
        outcome = store.load()
    gate = workflow.settings.gate
    notes: list[str] = []
    labels, label_warning = current_labels(context) if mode == "pull_request" else (context.labels, None)
    if label_warning:
        notes.append(label_warning)
    trusted = _trusted(conversation, context, workflow, options, root) if mode == "pull_request" else None
    key = comment_key(options.comment_key, workflow, root, configured=trusted.comment_key if trusted else None)
    if trusted is not None:
        notes += [trusted.warning] if trusted.warning else []
        # the label that overrides is the base branch's (or the default), never the one the pull request names
        gate = gate.model_copy(update={"override_label": trusted.override_label})
        conversation = conversation or _conversation(context, options, trusted.comment_author, key)
        notes += conversation.warnings
    if options.cases and outcome.baseline is not None:
        outcome.baseline.results = only_cases_of(outcome.baseline.results, results)
    max_age = getattr(workflow.settings.baseline, "max_age_days", None)
    head_sha = context.head_sha or results.git.sha
    acceptance = acceptance_for(conversation, head_sha) if mode == "pull_request" else None
    history = load_history(workflow, context, outcome, store)
    gated = gate_comparison(
        results,
        outcome,
        gate,
        [*labels, *options.labels],
        max_age_days=max_age,
        acceptance=acceptance,
        history=history,
    )
    if mode == "pull_request" and gated.decision.override and gated.decision.override.kind == "label":
        gated = _name_who_labelled(context, gated)
    comparison = comparison_file(gated)
    write_text_atomic(out / "comparison.json", comparison.model_dump_json(indent=2) + "\n")
    write_text_atomic(out / "junit.xml", junit_xml(results, comparison, workflow.base_dir, root))

    run_url = context.run_url
    expected = plan.expected_cases()
    report_url = artifacts_url(run_url)
    markdown = render_report(
        comparison,
        results,
        expected,
        run_url=run_url,
        head_sha=head_sha,
        template_dir=workflow.template_dir,
        report_url=report_url,
        note=" ".join(n for n in (conversation.note if conversation else None, label_warning and UNCONFIRMED) if n),
    )
    write_text_atomic(out / "report.md", markdown)
    trend = trend_data(history.history) if history is not None and history.history is not None else None
    write_report_html(out, results, comparison, expected, trend, run_url=run_url, report_url=report_url)
    if mode == "pull_request":
        # What the trusted `publish` step of the fork-safe workflow needs; data only, checked again there.
        handoff = {"number": context.pull_request.get("number"), "head_sha": head_sha, "comment_key": key,
                   "run_id": context.run_id}  # fmt: skip
        write_text_atomic(out / "pull-request.json", json.dumps(handoff) + "\n")

    if comparison.baseline is None:  # said first and loudly: a gate with nothing to compare guards little
        warn(f"no baseline, nothing was compared: {'; '.join(outcome.warnings) or 'no baseline was found'}")
    gating = mode != "baseline" or gate.on_push == "fail"
    baseline_note, baseline_lost = _advance(mode, options, plan, store, results, history)
    posting = mode == "pull_request" and options.post_comment
    comment = None
    if posting and context.token and context.repository:
        comment = CommentTarget(
            number=int(context.pull_request["number"]),
            key=key,
            run_id=int(context.run_id or 0),
            attempt=context.attempt,
            policy=comment_policy(workflow, options, author=trusted.comment_author if trusted else None),
            digest=report_digest(comparison, results),
            data=reported_data(conversation, head_sha),
            author=conversation.sticky.author if conversation and conversation.sticky else None,
            known=conversation.sticky.ours if conversation and conversation.sticky else None,
        )
    check = None
    report, partial = workflow.settings.report, bool(conversation and conversation.partial)
    status = bool(conversation and conversation.commit_status)  # `/eval`: the verdict where branch protection sees it
    if (report.check_run or status) and mode != "local" and context.token and context.repository and head_sha:
        passed = comparison.verdict == "pass" or not gating
        title = comparison.gate.reason
        # the name branch protection requires: a pull request naming another required check must not set it
        name = trusted.check_name if trusted else report.check_name
        check = None if partial else CheckTarget(name, head_sha, passed, title, report.check_run, status)
    delivered = deliver(
        GitHubClient(context.api_url, context.token or ""),
        context.repository or "",
        markdown,
        failing=comparison.verdict == "fail",
        comment=comment,
        check=check,
        run_url=run_url,
        step_summary=context.step_summary,
        summary_note=summary_note(out / "report.html"),
    )
    notes += delivered.notes
    github_outputs(results, comparison, context, workflow.base_dir, root, out, delivered.comment_url)
    if mode == "local" and _terminal():
        # A person at a terminal reads text, not GitHub markdown (escapes, entities, HTML): the same verdicts as
        # plain lines, and where the comment and the page are, to open as a reviewer would see them. Piped into a
        # file or another program, the markdown itself is what is wanted.
        print(render_comparison(comparison))
        print(f"the pull request comment (markdown): {out / 'report.md'}; the page: {out / 'report.html'}")
    elif not context.step_summary or mode == "local":
        print(markdown)
    for note in notes:
        warn(note)
    for line in verdict_lines(
        comparison,
        results,
        comment_url=delivered.comment_url,
        baseline_note=baseline_note,
        gating=gating,
    ):
        print(line, flush=True)
    if baseline_lost:
        return exit_code_for_decision("fail")
    return exit_code_for_decision(comparison.verdict if gating else "pass")


def _terminal() -> bool:
    try:
        return sys.stdout.isatty()
    except (AttributeError, ValueError):  # a replaced or closed stream
        return False


def _trusted(
    conversation: PullRequestRun | None,
    context: ActionsContext,
    workflow: Workflow,
    options: PublishOptions,
    root: Path,
) -> TrustedSettings:
    """What the run read when it started, or (`merge`, a shard's run) what the inputs and the base branch say now."""
    if conversation is not None and conversation.trusted is not None:
        return conversation.trusted
    return trusted_settings(context, workflow, options.comment_author, root)


def _conversation(context: ActionsContext, options: PublishOptions, author: str | None, key: str) -> PullRequestRun:
    """A run that did not read our comment when it started (`merge`, or `ci` without a token) reads it now."""
    run = PullRequestRun()
    if not (context.token and context.repository and options.post_comment):
        return run
    try:
        client = GitHubClient(context.api_url, context.token)
        run.sticky = read_sticky(client, context.repository, int(context.pull_request["number"]), key, author)
    except GitHubError as exc:
        run.warnings.append(f"the pull request comment could not be read, so no /eval accept could count: {exc}")
    return run


def _name_who_labelled(context: ActionsContext, gated: GatedComparison) -> GatedComparison:
    """The override label's note names who added it and when, as the issue's timeline records it."""
    override, number = gated.decision.override, (context.pull_request or {}).get("number")
    if override is None or not override.label or not isinstance(number, int) or not context.token:
        return gated
    client = GitHubClient(context.api_url, context.token)
    found = label_added(client, context.repository or "", number, override.label)
    if found is None:
        return gated
    return dataclasses.replace(gated, decision=name_who_labelled(gated.decision, found.login, found.at))


def _advance(
    mode: str,
    options: PublishOptions,
    plan: Plan,
    store: BaselineStore,
    results: ResultsFile,
    history: HistoryState | None,
) -> tuple[str, bool]:
    """A default-branch run stores its baseline and its history record together (a whole-suite run only), or
    neither; a line for the log, and whether they were lost, which fails the job: every later pull request would
    compare with an older baseline, or go without the drift gate and the known flaky cases."""
    if mode != "baseline":
        return "", False
    out = Path(options.output_dir)
    if history is not None and history.error is not None:
        withdrawn = _withdraw(out / "results.json") if plan.workflow.settings.baseline.store == "artifact" else ""
        error(
            "neither the baseline nor the history was stored, since the history cannot advance: "
            + "; ".join(filter(None, (history.error, withdrawn)))
        )
        return "the baseline and the history were NOT stored", True
    why = "--cases ran only part of the suite" if options.cases else why_not_a_baseline(results, plan)
    step = next_history(history, results, whole_suite=why is None)
    if step.carried is not None:
        # Before the store: a full disk here stores nothing. The artifact store's upload carries it from here.
        write_text_atomic(out / HISTORY_FILE, step.carried)
    if options.cases:  # a partial run never replaces the whole suite's baseline
        return " · ".join(filter(None, (f"baseline not stored: {why}", step.note))), False
    if why is not None:
        error(f"the baseline was not stored, so pull requests keep comparing with an older one: {why}")
        return "the baseline was NOT stored", True
    try:
        where = store.save(results, step.pending)
    except GitHubError as exc:
        if step.carried is not None:
            (out / HISTORY_FILE).unlink(missing_ok=True)  # the folder carries no history the store lacks
        error(f"neither the baseline nor the history was stored, so pull requests keep an older one: {exc}")
        return "the baseline was NOT stored", True
    return " · ".join(filter(None, (f"baseline stored: {where}", step.note))), False
