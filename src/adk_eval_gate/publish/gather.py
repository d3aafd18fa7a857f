"""The load step of a report: everything the comparison rests on besides the results — the baseline (limited to the
cases this run ran), the history, the pull request's labels as GitHub confirms them, the trusted settings, and our
comment with its acceptances. It reads; it writes nothing, here or on GitHub."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path

from adk_eval_gate.baseline.history import HistoryState, load_history
from adk_eval_gate.baseline.stores import BaselineStore, LoadOutcome
from adk_eval_gate.config.loader import Workflow
from adk_eval_gate.config.workflow_settings import GateSettings
from adk_eval_gate.github.client import GitHubError
from adk_eval_gate.github.context import ActionsContext
from adk_eval_gate.github.labels import current_labels
from adk_eval_gate.handshake.settings import PublishOptions, comment_key
from adk_eval_gate.handshake.status import PullRequestRun, read_sticky
from adk_eval_gate.handshake.trusted import TrustedSettings, trusted_settings
from adk_eval_gate.publish.run_value import PublishRun
from adk_eval_gate.results.offline import mixed
from adk_eval_gate.results.results_format import ResultsFile
from adk_eval_gate.run.shards import only_cases_of


@dataclass(frozen=True)
class Gathered:
    outcome: LoadOutcome  # the baseline as loaded, limited to the cases run (a new value; the loaded one is kept)
    history: HistoryState | None
    labels: tuple[str, ...]  # the pull request's labels (GitHub's word on a pull request's run, else the event's)
    label_warning: str | None  # why the labels could not be confirmed
    gate: GateSettings  # the config's, with the trusted override label on a pull request's run
    trusted: TrustedSettings | None  # a pull request's run: what the inputs and the base branch say
    key: str  # our comment's key
    conversation: PullRequestRun | None
    notes: tuple[str, ...]  # warnings for the end of the log, in the order they arose


def gather(run: PublishRun, *, store: BaselineStore, outcome: LoadOutcome) -> Gathered:
    """A pull request's run's labels, settings and comment come from GitHub and the base branch."""
    options, workflow, results, context = run.options, run.workflow, run.results, run.context
    pull_request, conversation, root = run.pull_request, run.conversation, run.root
    labels, label_warning = current_labels(context) if pull_request else (context.labels, None)
    notes = [label_warning] if label_warning else []
    trusted = _trusted(conversation, context, workflow, options, root) if pull_request else None
    key = comment_key(options.comment_key, workflow, root, configured=trusted.comment_key if trusted else None)
    gate = workflow.settings.gate
    if trusted is not None:
        notes += [trusted.warning] if trusted.warning else []
        # the label that overrides is the base branch's (or the default), never the one the pull request names
        gate = gate.model_copy(update={"override_label": trusted.override_label})
        conversation = conversation or _conversation(context, options, trusted.comment_author, key)
        notes += conversation.warnings
    compared = only_cases_run(outcome, results) if options.cases else outcome
    loaded = compared.baseline
    if loaded is not None and (problem := mixed(results, loaded.results, loaded.identity.source)) is not None:
        compared = LoadOutcome(None, [], error=problem)  # results/offline.py: never compared; fails closed (error)
    history = load_history(workflow, context, outcome, store)
    return Gathered(compared, history, tuple(labels), label_warning, gate, trusted, key, conversation, tuple(notes))


def only_cases_run(outcome: LoadOutcome, results: ResultsFile) -> LoadOutcome:
    """The baseline limited to the cases a `--cases` run ran, as a new outcome: cases not run are not missing."""
    if outcome.baseline is None:
        return outcome
    baseline = dataclasses.replace(outcome.baseline, results=only_cases_of(outcome.baseline.results, results))
    return dataclasses.replace(outcome, baseline=baseline)


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
    number = int((context.pull_request or {})["number"])
    try:
        run.sticky = read_sticky(context.client(), context.repository, number, key, author)
    except GitHubError as exc:
        run.warnings.append(f"the pull request comment could not be read, so no /eval accept could count: {exc}")
    return run
