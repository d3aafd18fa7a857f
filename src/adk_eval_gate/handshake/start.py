"""The pull request's handshake, `ci`'s first step and all of it before any of the pull request's code is imported
or run (custom metrics, setup, agents): no token it could read in the checkout, who asked (an `/eval` comment,
handshake/who_asked.py), for which commit, the settings a security decision reads (handshake/trusted.py), the
mode (handshake/mode.py), and the start of the status in our comment (handshake/status.py)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from adk_eval_gate.baseline.stores import merge_base_found
from adk_eval_gate.config.loader import Workflow
from adk_eval_gate.core.paths import repository_root
from adk_eval_gate.core.persisted_credentials import refuse_persisted_credential
from adk_eval_gate.github.context import ActionsContext
from adk_eval_gate.handshake.mode import mode_of
from adk_eval_gate.handshake.settings import PublishOptions, comment_key
from adk_eval_gate.handshake.status import PullRequestRun, start_pull_request_run
from adk_eval_gate.handshake.trusted import trusted_settings
from adk_eval_gate.handshake.who_asked import CommentRun, prepare_comment_run


@dataclass(frozen=True)
class Handshake:
    """What a run settles before its agents run. `exit_code` set: nothing is to run (an `/eval` refused or
    answered); otherwise the options (with an `/eval`'s cases), the context (an `/eval`'s pull request, the
    merge-base found) and what a pull request's run read and showed when it started."""

    options: PublishOptions
    context: ActionsContext
    conversation: PullRequestRun | None = None
    more_runs: int | None = None
    exit_code: int | None = None
    goldens: CommentRun | None = None  # `/eval update-goldens`: push the update after the report


def shake_hands(options: PublishOptions, context: ActionsContext, workflow: Workflow) -> Handshake:
    """No token in the checkout, then who asked, for which commit; the merge-base that picks the baseline."""
    refuse_persisted_credential(repository_root(workflow.base_dir, context.workspace))
    started = _start(options, context, workflow)
    if started.exit_code is not None:
        return started
    # The merge-base picks the baseline: named by git now, before setup or an agent can touch the checkout's .git.
    return dataclasses.replace(started, context=merge_base_found(started.context, workflow.base_dir))


def _start(options: PublishOptions, context: ActionsContext, workflow: Workflow) -> Handshake:
    """An `/eval` comment becomes its pull request's run (or an exit code when nothing is to run); a pull request's
    run reads our comment and shows that it started."""
    root = repository_root(workflow.base_dir, context.workspace)
    more_runs, command = None, None
    if mode_of(context) == "comment":
        asked = prepare_comment_run(context, root, options.comment_author)
        if isinstance(asked, int):
            return Handshake(options, context, exit_code=asked)
        context, command, more_runs = asked.context, asked, asked.command.runs
        options = dataclasses.replace(options, cases=[*options.cases, *asked.command.cases])
    if mode_of(context) != "pull_request" or options.shard is not None:  # a shard: `merge` reports, and reads then
        return Handshake(options, context, None, more_runs)
    # our login, our comment's key, the override label, the check's name: the inputs and the base branch's config,
    # never the checkout's (the pull request's own)
    trusted = trusted_settings(context, workflow, options.comment_author, root)
    conversation = PullRequestRun()
    if options.post_comment and context.token:
        key = comment_key(options.comment_key, workflow, root, configured=trusted.comment_key)
        progress = workflow.settings.comment.progress
        author = trusted.comment_author
        conversation = start_pull_request_run(context, key, author, context.head_sha or "", progress=progress)
    conversation = dataclasses.replace(conversation, trusted=trusted)
    if command is not None:
        conversation = dataclasses.replace(
            conversation,
            acceptance=command.acceptance,
            note=command.note,
            commit_status=True,
            partial=command.command.partial,
        )
    goldens = command if command is not None and command.command.action == "update-goldens" else None
    return Handshake(options, context, conversation, more_runs, goldens=goldens)
