"""One run as publishing reads it: a frozen value `finish` builds once, so every step after the agents ran takes
the run whole instead of a dozen of its parts (the options, the plan and its settings, the results, the Actions
context, the mode, the output folder and the repository root, the commit evaluated, what the handshake learnt)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from adk_eval_gate.config.loader import Workflow
from adk_eval_gate.core.paths import repository_root
from adk_eval_gate.github.context import ActionsContext
from adk_eval_gate.handshake.mode import Mode, mode_of
from adk_eval_gate.handshake.settings import PublishOptions
from adk_eval_gate.handshake.status import PullRequestRun
from adk_eval_gate.results.results_format import ResultsFile
from adk_eval_gate.run.plan import Plan


@dataclass(frozen=True)
class PublishRun:
    options: PublishOptions
    plan: Plan
    results: ResultsFile
    context: ActionsContext
    mode: Mode
    out: Path  # the output folder
    root: Path  # the repository's root, how files are named to people
    head_sha: str | None  # the commit evaluated: the event's head, else the checkout's
    conversation: PullRequestRun | None  # what a pull request's run learnt when it started (handshake/)

    @property
    def workflow(self) -> Workflow:
        return self.plan.workflow

    @property
    def pull_request(self) -> bool:
        return self.mode == "pull_request"


def publish_run(
    options: PublishOptions,
    plan: Plan,
    results: ResultsFile,
    context: ActionsContext,
    conversation: PullRequestRun | None,
) -> PublishRun:
    root = repository_root(plan.workflow.base_dir, context.workspace)
    head_sha = context.head_sha or results.git.sha
    out = Path(options.output_dir)
    return PublishRun(options, plan, results, context, mode_of(context), out, root, head_sha, conversation)
