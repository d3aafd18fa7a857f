"""`status`: a pull request's run that stopped without reporting says so in our comment.

The example workflows call it from an `if: cancelled()` and an `if: failure()` step (or the Action with its
`status` input). It edits our comment only while it still shows this very run under way, so a run that reported
(a failing gate is a report) or a newer run's status is never touched.
"""

from __future__ import annotations

import argparse

from adk_eval_gate.commands.options import config_option


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser(
        "status",
        parents=[config_option()],
        help="mark this run's live status in the pull request comment as cancelled or failed",
    )
    parser.add_argument("--state", required=True, choices=("cancelled", "failed"), help="how the run stopped")
    parser.add_argument("--comment-key", help="the sticky comment's key, as given to `ci`")
    parser.add_argument("--comment-author", help="the login the token posts as, as given to `ci`")
    parser.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    from adk_eval_gate.commands.loading import load_config
    from adk_eval_gate.core.paths import repository_root
    from adk_eval_gate.github import workflow_commands as log
    from adk_eval_gate.github.client import GitHubError
    from adk_eval_gate.github.context import ActionsContext
    from adk_eval_gate.handshake.settings import comment_key
    from adk_eval_gate.handshake.status import mark_stopped, with_pull_request
    from adk_eval_gate.handshake.trusted import trusted_settings

    workflow = load_config(args.config)
    context = ActionsContext.from_env()
    root = repository_root(workflow.base_dir, context.workspace)
    try:
        # which comment is ours: the inputs or the base branch's config, never the pull request's (handshake/trusted.py)
        context = with_pull_request(context)
        trusted = trusted_settings(context, workflow, args.comment_author, root)
        key = comment_key(args.comment_key, workflow, root, configured=trusted.comment_key)
        said = mark_stopped(context, key, trusted.comment_author, args.state)
    except GitHubError as exc:
        # the job has already failed or been cancelled; a status that cannot be set must not add a second error
        log.warn(f"the comment's status could not be set to {args.state}: {exc}")
        return 0
    print(f"adk-eval-gate status: {said}")
    return 0
