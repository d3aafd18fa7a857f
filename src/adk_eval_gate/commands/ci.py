"""`ci`: the whole pipeline as the Action runs it, the mode chosen from the event.

* pull_request: run → compare with the baseline → report → one sticky comment → gate (exit code);
* push to the default branch: run → compare with the previous baseline → store these results as the new one; the
  job passes unless `gate.on_push: fail` (it fails only when the baseline could not be stored);
* an `/eval` comment on a pull request (issue_comment): from someone with write access, about the head as it was
  when they wrote it, the pull request's run (docs/comment-commands.md); anyone else's gets a reply, nothing runs;
* anywhere else (a laptop, workflow_dispatch): run → compare → the same markdown on stdout and the same files,
  nothing posted.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING

from adk_eval_gate.commands.options import add_offline_option, config_option, publishing_options

if TYPE_CHECKING:
    from adk_eval_gate.baseline.stores import LoadOutcome
    from adk_eval_gate.config.loader import Workflow
    from adk_eval_gate.core.command_files import Fence
    from adk_eval_gate.github.context import ActionsContext
    from adk_eval_gate.handshake.settings import PublishOptions
    from adk_eval_gate.handshake.start import Handshake
    from adk_eval_gate.results.results_format import ResultsFile
    from adk_eval_gate.run.adaptive import Decider
    from adk_eval_gate.run.plan import Plan
    from adk_eval_gate.targets.host_pool import AgentHostPool


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser(
        "ci",
        parents=[config_option(), publishing_options()],
        help="the whole pipeline as the GitHub Action runs it (mode from the event)",
    )
    parser.add_argument("--quiet", action="store_true", help="no progress lines")
    parser.add_argument("--shard", help="run only shard i of n (e.g. 2/4); `merge` then gates the whole")
    parser.add_argument(
        "--cases",
        action="append",
        metavar="SET[:CASES]",
        help="only these cases, as `adk eval` picks them: eval_set_id_or_file[:case1,case2] (globs allowed; "
        "repeatable); such a run is never stored as the baseline",
    )
    parser.add_argument(
        "--setup",
        action="store_true",
        help="run the config's `setup:` commands here too (in GitHub Actions they always run; on a laptop they "
        "would install into your active environment, so by default they do not)",
    )
    add_offline_option(parser)
    parser.add_argument(
        "--baseline",
        metavar="FILE",
        help="compare with this local baseline file instead of the config's store (it must exist: make one with "
        "`run --all-runs --output FILE`); a push to the default branch writes it",
    )
    parser.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    from adk_eval_gate.commands.loading import load_config
    from adk_eval_gate.commands.options import publish_options
    from adk_eval_gate.config.offline import played_offline

    workflow = load_config(args.config)  # config errors before the heavy imports
    if args.offline:
        workflow = played_offline(workflow)
    if args.baseline:
        from adk_eval_gate.commands.local_baseline import with_baseline_file

        workflow = with_baseline_file(workflow, args.baseline)
    return run_ci(publish_options(args), workflow=workflow, run_setup_here=args.setup)


def run_ci(
    options: PublishOptions,
    context: ActionsContext | None = None,
    workflow: Workflow | None = None,
    run_setup_here: bool = False,
) -> int:
    from adk_eval_gate.commands.loading import end_pull_request_code, load_config
    from adk_eval_gate.commands.options import offline_workflow
    from adk_eval_gate.core.collector import bulk_data
    from adk_eval_gate.core.command_files import Fence
    from adk_eval_gate.core.held_tokens import held
    from adk_eval_gate.core.sealed import sealed
    from adk_eval_gate.github.context import ActionsContext
    from adk_eval_gate.targets.host_pool import AgentHostPool

    context = context or ActionsContext.from_env()
    workflow = offline_workflow(workflow or load_config(options.config), offline=False)  # the config's own too
    setup_allowed = run_setup_here or in_actions()
    # The runner's command files as they are before any of the pull request's code runs (core/command_files.py).
    fence = Fence.open()
    hosts = AgentHostPool()  # this command's agent hosts, handed to the run (targets/host_pool.py)
    # Before any of the pull request's code runs (setup, the agent host, metrics): what it writes into our install
    # is never loaded here, and the run fails if it tried (core/sealed.py).
    with sealed(bool(held())):
        if not (workflow.settings.setup and setup_allowed):
            # `setup:` may install the agents' own google-adk: then the host starts after it. Otherwise google-adk
            # alone is imported while this process checks who asked and loads the eval sets; the agents (the pull
            # request's code) are named to the host only after those checks (_run).
            hosts.start_early(workflow.path)
        try:
            with bulk_data() as loaded:
                return _run(options, context, workflow, setup_allowed, loaded, hosts, fence)
        finally:
            end_pull_request_code(hosts, fence)  # done already unless the run stopped early


def in_actions() -> bool:
    return os.environ.get("GITHUB_ACTIONS") == "true"


def _run(
    options: PublishOptions,
    context: ActionsContext,
    workflow: Workflow,
    setup_allowed: bool,
    loaded: Callable[[], None],
    hosts: AgentHostPool,
    fence: Fence,
) -> int:
    """handshake → run → publish (whose finish gates): each entered once, the agents only after the handshake."""
    from adk_eval_gate.commands.loading import end_pull_request_code
    from adk_eval_gate.core.collector import reading_again
    from adk_eval_gate.core.paths import repository_root
    from adk_eval_gate.core.sealed import check_sealed
    from adk_eval_gate.handshake.start import shake_hands
    from adk_eval_gate.publish.finish import finish
    from adk_eval_gate.results.offline import offline_failures
    from adk_eval_gate.run.pipeline import run_plan

    handshake = shake_hands(options, context, workflow)
    if handshake.exit_code is not None:
        return handshake.exit_code
    plan = _plan(handshake, workflow, setup_allowed)
    hosts.warm_up(plan.workflow)  # the host imports the agents while a baseline loads and the run's stages import
    outcome = _adaptive_baseline(plan, handshake.context)
    decider = _decider(outcome)
    loaded()  # the plan (and an adaptive run's baseline) live until the end, as in `run`
    results = run_plan(plan, quiet=handshake.options.quiet, decider=decider, hosts=hosts)
    if handshake.conversation is not None and handshake.context.head_sha:
        # an issue_comment run's GITHUB_SHA is the default branch's
        results = evaluated_at(results, handshake.context.head_sha)
    # Nothing of the pull request's runs past here: what it left running ends, and the runner's command files must
    # be as they were before `finish` writes the step's outputs and summary into them.
    end_pull_request_code(hosts, fence)
    # No agent code runs in this process from here: the baseline, history and comparison `finish` loads and builds
    # live until the end, as the run's results do: read with the collector off, then frozen with them (read_again).
    reading_again()
    check_sealed()  # nothing is reported from a process whose install changed under it
    options, context = handshake.options, handshake.context
    code = finish(options, plan, results, context, outcome, handshake.conversation)
    if (failing := offline_failures(results)) is not None:  # results/offline.py: no baseline, its own verdict
        print(f"adk-eval-gate: {failing}", flush=True)
        code = max(code, 1)
    if handshake.goldens is None:
        return code
    from pathlib import Path

    from adk_eval_gate.commands.goldens_push import push_goldens  # `/eval update-goldens`: docs/goldens.md

    root = repository_root(workflow.base_dir, context.workspace)
    return push_goldens(handshake.goldens, results, context, plan.workflow.base_dir, root, Path(options.output_dir))


def _plan(handshake: Handshake, workflow: Workflow, setup_allowed: bool) -> Plan:
    """The plan of this run: an `/eval`'s or `--cases`' selection, an `/eval`'s more runs, the shard; then the
    config's `setup:` commands where they may run."""
    from adk_eval_gate.commands.loading import plan_of
    from adk_eval_gate.run.adaptive import with_more_runs
    from adk_eval_gate.run.selection import select_cases
    from adk_eval_gate.run.setup import run_setup
    from adk_eval_gate.run.shards import shard_plan

    options = handshake.options
    plan = plan_of(workflow)
    if options.cases:
        plan = select_cases(plan, options.cases)
    if handshake.more_runs:
        plan = with_more_runs(plan, handshake.more_runs)
    if options.shard is not None:
        plan = shard_plan(plan, *options.shard)
    settings = plan.workflow.settings
    if settings.setup and setup_allowed:
        run_setup(settings.setup, plan.workflow.base_dir)
    elif settings.setup:
        # Outside Actions `setup:` would change the user's own environment (pip install into the active venv):
        # a local run touches nothing but its output folder unless asked.
        count = len(settings.setup)
        print(
            f"setup: {count} command{'s' if count != 1 else ''} skipped outside GitHub Actions; "
            "install the agent's dependencies yourself, or pass --setup to run them here",
            file=sys.stderr,
        )
    return plan


def _adaptive_baseline(plan: Plan, context: ActionsContext) -> LoadOutcome | None:
    """Adaptive runs decide against the baseline the comparison will use: loaded before running."""
    from adk_eval_gate.handshake.mode import mode_of
    from adk_eval_gate.run.adaptive import has_adaptive_runs

    if mode_of(context) == "baseline" or not has_adaptive_runs(plan):
        return None
    from adk_eval_gate.baseline.stores import build_store

    return build_store(plan.workflow, context).load()


def _decider(outcome: LoadOutcome | None) -> Decider | None:
    from adk_eval_gate.run.adaptive import Decider

    return Decider(outcome.baseline.results if outcome.baseline else None) if outcome else None


def evaluated_at(results: ResultsFile, sha: str) -> ResultsFile:
    """The results as of the commit evaluated, a new value: the run reads the checkout's commit, which for an
    `/eval` run (issue_comment: GITHUB_SHA is the default branch's) is not the pull request's head it evaluated."""
    return results.model_copy(update={"git": results.git.model_copy(update={"sha": sha})})
