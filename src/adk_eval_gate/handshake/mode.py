"""What a run is for, from the event that started it: a closed set, so every step that acts on it is checked."""

from __future__ import annotations

from typing import Literal

from adk_eval_gate.github.context import ActionsContext

Mode = Literal["pull_request", "comment", "baseline", "local"]
"""pull_request: judge a pull request and post to it · comment: an `/eval` command, which becomes a pull request's
run once allowed · baseline: a push to the default branch, whose results become the baseline · local: anywhere
else (a laptop, workflow_dispatch), nothing posted."""


def mode_of(context: ActionsContext) -> Mode:
    if context.pull_request is not None:
        return "pull_request"
    if context.event_name == "issue_comment":  # `/eval`: a pull request's run, once the command is allowed
        return "comment"
    default = (context.event.get("repository") or {}).get("default_branch")
    if context.event_name == "push" and default and context.ref == f"refs/heads/{default}":
        return "baseline"
    return "local"
