"""Everything after the agents ran, for `ci` and `merge`, as steps with one job each: load (the baseline, the
history, the pull request's labels and comment) → compare and decide → write the files → store the baseline (a
default-branch run) → deliver to GitHub → tell the log and return the exit code. Files come before GitHub, so an
API failure never loses the run; the job log ends with the verdict, why, and the comment's link."""

from __future__ import annotations

import dataclasses
import sys
from dataclasses import dataclass
from pathlib import Path

from adk_eval_gate.baseline.comparison_format import Comparison
from adk_eval_gate.baseline.stores import LoadOutcome, build_store
from adk_eval_gate.config.loader import Workflow
from adk_eval_gate.config.workflow_settings import max_age_days
from adk_eval_gate.core.collector import read_again
from adk_eval_gate.core.errors import WriteError
from adk_eval_gate.core.files import write_text_atomic
from adk_eval_gate.core.foreign_lines import inert
from adk_eval_gate.gate.comparison_file import comparison_file
from adk_eval_gate.gate.decision import GatedComparison, gate_comparison
from adk_eval_gate.gate.exit_codes import exit_code_for_decision
from adk_eval_gate.gate.policy import name_who_labelled
from adk_eval_gate.github.context import ActionsContext
from adk_eval_gate.github.conversation import label_added
from adk_eval_gate.github.labels import UNCONFIRMED
from adk_eval_gate.github.workflow_commands import warn
from adk_eval_gate.handshake.mode import Mode, mode_of
from adk_eval_gate.handshake.settings import PublishOptions, comment_policy
from adk_eval_gate.handshake.status import PullRequestRun, acceptance_for, reported_data
from adk_eval_gate.publish.comment import report_digest
from adk_eval_gate.publish.deliver import CheckTarget, CommentTarget, Delivered, Destinations, deliver
from adk_eval_gate.publish.gather import Gathered, gather
from adk_eval_gate.publish.outputs import github_outputs
from adk_eval_gate.publish.report_files import Handoff, write_report_files
from adk_eval_gate.publish.run_value import PublishRun, publish_run
from adk_eval_gate.publish.store import Stored, store_baseline_and_history, withdraw_results
from adk_eval_gate.report.console import render_comparison
from adk_eval_gate.report.html import summary_note
from adk_eval_gate.report.outputs import junit_xml, verdict_lines
from adk_eval_gate.report.run_marks import mark_junit, remove_stale
from adk_eval_gate.results.agents_cli_traces import write_traces
from adk_eval_gate.results.build import write_results
from adk_eval_gate.results.results_format import ResultsFile
from adk_eval_gate.run.agents_cli_plan import agents_cli_cases
from adk_eval_gate.run.plan import Plan
from adk_eval_gate.run.rescore_baseline import rescore_outcome

__all__ = ["Mode", "finish", "mode_of"]


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
            raise exc.also(withdraw_results(Path(options.output_dir) / "results.json")) from None
        raise


def _finish(
    options: PublishOptions,
    plan: Plan,
    results: ResultsFile,
    context: ActionsContext,
    outcome: LoadOutcome | None,
    conversation: PullRequestRun | None,
) -> int:
    run = publish_run(options, plan, results, context, conversation)  # built once: every step below reads it
    _write_results(run.out, plan, results)
    if options.shard is not None:
        return _finish_shard(run.out, options.shard, results, run.workflow, run.root)
    store = build_store(run.workflow, context)
    loaded = outcome if outcome is not None else store.load()
    gathered = gather(run, store=store, outcome=loaded)
    # a judge or scorer changed since the baseline and it kept its invocations: scored again, like for like
    gathered = dataclasses.replace(gathered, outcome=rescore_outcome(plan, gathered.outcome, results))
    comparison = _compare(run, gathered)
    read_again()  # `ci`: its baseline, history and comparison live until the end, frozen with its results
    handoff = Handoff(_pull_number(context), run.head_sha, gathered.key, context.run_id) if run.pull_request else None
    markdown = write_report_files(run, comparison, history=gathered.history, note=_note(gathered), handoff=handoff)
    if comparison.baseline is None:  # said first and loudly: a gate with nothing to compare guards little
        warn(f"no baseline, nothing was compared: {'; '.join(loaded.warnings) or 'no baseline was found'}")
    gating = run.mode != "baseline" or gathered.gate.on_push == "fail"
    decided = Decided(gathered, comparison, markdown, gating)
    stored = Stored()
    if run.mode == "baseline":
        stored = store_baseline_and_history(
            run.out, plan, store, results, gathered.history, partial=bool(options.cases)
        )
    delivered = _deliver(run, decided)
    github_outputs(results, comparison, context, run.workflow.base_dir, run.root, run.out, delivered.comment_url)
    _tell(run, decided, [*gathered.notes, *delivered.notes], delivered, stored)
    return _exit_code(comparison, gating=gating, baseline_lost=stored.lost)


@dataclass(frozen=True)
class Decided:
    """The run's report once compared and decided: what it rests on, the comparison with the gate's decision, its
    markdown, and whether the verdict gates this run (a default-branch run gates only with `on_push: fail`)."""

    gathered: Gathered
    comparison: Comparison
    markdown: str
    gating: bool


def _write_results(out: Path, plan: Plan, results: ResultsFile) -> None:
    """The run's own files, first, whatever follows; another run's reports beside them go (this run writes its
    own together later, or none if it stops first: never a page of one run beside the results of another)."""
    write_results(results, out / "results.json")
    remove_stale(out, results.run_id)
    write_traces(results, agents_cli_cases(plan), out)  # agents-cli's format, for `agents-cli eval grade`


def _finish_shard(out: Path, shard: tuple[int, int], results: ResultsFile, workflow: Workflow, root: Path) -> int:
    """A shard only runs part of the suite: `adk-eval-gate merge` compares, reports and gates the whole."""
    write_text_atomic(out / "junit.xml", mark_junit(junit_xml(results, None, workflow.base_dir, root), results.run_id))
    print(f"shard {shard[0]}/{shard[1]}: {results.summary.total} cases; results in {out / 'results.json'}")
    return 0


def _compare(run: PublishRun, gathered: Gathered) -> Comparison:
    """The comparison with the baseline and the gate's decision on it, with who labelled an override named."""
    results, context = run.results, run.context
    labels, age = [*gathered.labels, *run.options.labels], max_age_days(run.workflow.settings.baseline)
    accepted = acceptance_for(gathered.conversation, run.head_sha) if run.pull_request else None
    outcome, gate, history = gathered.outcome, gathered.gate, gathered.history
    gated = gate_comparison(results, outcome, gate, labels, max_age_days=age, acceptance=accepted, history=history)
    if run.pull_request and gated.decision.override and gated.decision.override.kind == "label":
        gated = _name_who_labelled(context, gated)
    return comparison_file(gated, results)  # the decision as data and words, as comparison.json stores it


def _name_who_labelled(context: ActionsContext, gated: GatedComparison) -> GatedComparison:
    """The override label's note names who added it and when, as the issue's timeline records it."""
    override, number = gated.decision.override, _pull_number(context)
    if override is None or not override.label or not isinstance(number, int) or not context.token:
        return gated
    found = label_added(context.client(), context.repository or "", number, override.label)
    if found is None:
        return gated
    return dataclasses.replace(gated, decision=name_who_labelled(gated.decision, found.login, found.at))


def _pull_number(context: ActionsContext) -> object:
    return (context.pull_request or {}).get("number")


def _note(gathered: Gathered) -> str:
    """Under the verdict: who asked for the run (`/eval`), and that the labels could not be confirmed."""
    asked = gathered.conversation.note if gathered.conversation else None
    return " ".join(n for n in (asked, gathered.label_warning and UNCONFIRMED) if n)


def _deliver(run: PublishRun, decided: Decided) -> Delivered:
    """The comment, the check run and commit status, the step summary: whichever this run and its token allow."""
    context, comparison = run.context, decided.comparison
    comment = None
    if run.pull_request and run.options.post_comment and context.token and context.repository:
        comment = _comment_target(run, decided.gathered, comparison)
    check = None
    if run.mode != "local" and context.token and context.repository and run.head_sha:
        check = _check_target(run.workflow, decided.gathered, comparison, run.head_sha, decided.gating)
    summary = summary_note(run.out / "report.html")
    where = Destinations(comment, check, context.run_url, context.step_summary, summary)
    return deliver(
        context.client(), context.repository or "", decided.markdown, where, failing=comparison.verdict == "fail"
    )


def _comment_target(run: PublishRun, gathered: Gathered, comparison: Comparison) -> CommentTarget:
    context = run.context
    trusted, conversation = gathered.trusted, gathered.conversation
    sticky = conversation.sticky if conversation else None
    return CommentTarget(
        number=int((context.pull_request or {})["number"]),
        key=gathered.key,
        run_id=int(context.run_id or 0),
        attempt=context.attempt,
        policy=comment_policy(run.workflow, run.options, author=trusted.comment_author if trusted else None),
        digest=report_digest(comparison, run.results),
        data=reported_data(conversation, run.head_sha),
        author=sticky.author if sticky else None,
        known=sticky.ours if sticky else None,
    )


def _check_target(
    workflow: Workflow, gathered: Gathered, comparison: Comparison, head_sha: str, gating: bool
) -> CheckTarget | None:
    """The verdict where branch protection sees it: a check run (`report.check_run`), and a commit status for an
    `/eval` run; none for a partial `/eval` run, which is no verdict on the commit."""
    report, conversation = workflow.settings.report, gathered.conversation
    status = bool(conversation and conversation.commit_status)
    if not (report.check_run or status) or (conversation and conversation.partial):
        return None
    passed = comparison.verdict == "pass" or not gating
    # the name branch protection requires: a pull request naming another required check must not set it
    name = gathered.trusted.check_name if gathered.trusted else report.check_name
    return CheckTarget(name, head_sha, passed, comparison.gate.reason, report.check_run, status)


def _tell(run: PublishRun, decided: Decided, notes: list[str], delivered: Delivered, stored: Stored) -> None:
    """The log: the report (unless the step summary shows it), the warnings, then the verdict lines last."""
    out, comparison, markdown = run.out, decided.comparison, decided.markdown
    if run.mode == "local" and _terminal():
        # A person at a terminal reads text, not GitHub markdown (escapes, entities, HTML): the same verdicts as
        # plain lines, and where the comment and the page are, to open as a reviewer would see them. Piped into a
        # file or another program, the markdown itself is what is wanted.
        print(render_comparison(comparison))
        print(f"the pull request comment (markdown): {out / 'report.md'}; the page: {out / 'report.html'}")
    elif not run.context.step_summary or run.mode == "local":
        print(inert(markdown))  # a template of the pull request's could write workflow commands
    for note in notes:
        warn(note)
    lines = verdict_lines(
        comparison, run.results, comment_url=delivered.comment_url, baseline_note=stored.note, gating=decided.gating
    )
    for line in lines:
        print(line, flush=True)


def _exit_code(comparison: Comparison, *, gating: bool, baseline_lost: bool) -> int:
    """A lost baseline fails the job whatever the verdict; a default-branch run gates only with `on_push: fail`."""
    if baseline_lost:
        return exit_code_for_decision("fail")
    return exit_code_for_decision(comparison.verdict if gating else "pass")


def _terminal() -> bool:
    try:
        return sys.stdout.isatty()
    except (AttributeError, ValueError):  # a replaced or closed stream
        return False
