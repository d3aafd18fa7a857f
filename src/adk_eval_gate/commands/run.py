"""`run`: run the agents, score every case, write the results file (exit 0 only when every case passed)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from adk_eval_gate.commands.help import OUTPUT_DIR, OutputDefault
from adk_eval_gate.commands.options import add_offline_option, config_option
from adk_eval_gate.core.keys import CaseKey

if TYPE_CHECKING:
    from adk_eval_gate.run.adaptive import Decider
    from adk_eval_gate.run.plan import Plan
    from adk_eval_gate.targets.host_pool import AgentHostPool


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser(
        "run", parents=[config_option()], help="run the agents, score every case, write the results file"
    )
    parser.add_argument(
        "--output",
        metavar="FILE",
        default=OutputDefault(f"{OUTPUT_DIR}/results.json"),
        help=f"where to write the results JSON (default: {OUTPUT_DIR}/ beside the config, where `compare` and "
        "`view` look)",
    )
    parser.add_argument("--quiet", action="store_true", help="print neither progress lines nor the per-case table")
    parser.add_argument(
        "--print-detailed-results",
        "--print_detailed_results",
        action="store_true",
        help="print every metric's per-invocation scores, prompts, responses and tool calls (as adk eval does)",
    )
    parser.add_argument(
        "--cases",
        action="append",
        metavar="SET[:CASES]",
        help="only these cases, as `adk eval` picks them: eval_set_id_or_file[:case1,case2] "
        "(globs allowed; repeatable)",
    )
    parser.add_argument(
        "--baseline",
        help="adaptive runs (num_runs: {min, max}) decide against this results file "
        "(default: the config's baseline store)",
    )
    parser.add_argument(
        "--all-runs",
        action="store_true",
        help="adaptive agents run every case num_runs.max times, as a push run building the baseline does",
    )
    add_offline_option(parser)
    parser.set_defaults(handler=handle, agent_hosts=None)


def handle(args: argparse.Namespace) -> int:
    import gc

    from adk_eval_gate.commands.loading import end_pull_request_code
    from adk_eval_gate.core.command_files import Fence
    from adk_eval_gate.core.held_tokens import held
    from adk_eval_gate.core.sealed import sealed
    from adk_eval_gate.targets.host_pool import AgentHostPool

    hosts = args.agent_hosts or AgentHostPool()  # main's, which may have started the host already
    # The runner's command files, as they are before the agents (the pull request's code) run: main's early host
    # has imported google-adk only, and no agent.
    fence = Fence.open()
    collecting = gc.isenabled()
    try:
        gc.disable()  # until the run starts: imports and loading make little garbage (see _run_and_report)
        # The agent host imports google-adk (about a second) while this process imports the stages: main() has
        # usually started it already; this covers an abbreviated --config and callers of handle itself.
        hosts.start_early(Path(args.config))
        with sealed(bool(held())):  # the agents run beside this process: what they write is never loaded here
            return _run_and_report(args, hosts)
    finally:
        if collecting:  # a refusal before the run started leaves it off: a caller in this process needs it back
            gc.enable()
        end_pull_request_code(hosts, fence)


def _run_and_report(args: argparse.Namespace, hosts: AgentHostPool) -> int:
    import gc

    from adk_eval_gate.gate.exit_codes import exit_code_for
    from adk_eval_gate.report.adk_details import print_case_details
    from adk_eval_gate.report.console import render_table
    from adk_eval_gate.report.run_marks import remove_stale
    from adk_eval_gate.results.agents_cli_traces import write_traces
    from adk_eval_gate.results.build import write_results
    from adk_eval_gate.run.agents_cli_plan import agents_cli_cases
    from adk_eval_gate.run.pipeline import run_plan

    plan, decider = _plan_and_decider(args, hosts)
    # Everything imported and loaded so far lives until exit: the collector need not walk it again and again
    # while the run decodes results, and runs less often (most garbage here goes with its last reference).
    gc.freeze()
    gc.set_threshold(20_000, 50, 100)
    gc.enable()
    results = run_plan(plan, quiet=args.quiet, decider=decider, hosts=hosts)
    write_results(results, Path(args.output))
    if Path(args.output).name == "results.json":  # what view and compare pair with it: a report of another run goes
        stale = remove_stale(Path(args.output).parent, results.run_id)
        if stale:
            print(f"removed {', '.join(stale)} beside it: written for another run", file=sys.stderr)
    write_traces(results, agents_cli_cases(plan), Path(args.output).parent)
    if results.interrupted:
        print(f"stopped early ({results.stop_reason}); finished cases were scored and written", file=sys.stderr)
    if args.print_detailed_results:
        expected = plan.expected_cases()
        for eval_set in results.eval_sets:
            for case in eval_set.cases:
                key = CaseKey(eval_set.agent, eval_set.eval_set_id, case.eval_id)
                print_case_details(eval_set.eval_set_id, case, expected[key])
    if not args.quiet:
        print(render_table(results))
    print(f"results written to {args.output}")
    if results.offline:  # said last too: the table above scores the tools and wiring, not the model
        print(results.offline)
    return exit_code_for(results)


def _plan_and_decider(args: argparse.Namespace, hosts: AgentHostPool) -> tuple[Plan, Decider | None]:
    from adk_eval_gate.commands.loading import load_plan
    from adk_eval_gate.github.context import ActionsContext
    from adk_eval_gate.run.adaptive import decider_for
    from adk_eval_gate.run.selection import select_cases

    if (
        args.baseline
    ):  # a typo must not turn into "nothing to decide against" (nor pass unchecked without adaptive runs)
        from adk_eval_gate.commands.local_baseline import MAKE_ONE
        from adk_eval_gate.core.errors import InputError

        if not Path(args.baseline).is_file():
            raise InputError(
                None, "--baseline", f"no results file at {args.baseline}", MAKE_ONE.format(path=args.baseline)
            )
    plan = load_plan(args.config, hosts=hosts, offline=args.offline)  # names the agents to the host started above
    if args.cases:
        plan = select_cases(plan, args.cases)
    baseline = Path(args.baseline) if args.baseline else None
    decider = None if args.all_runs else decider_for(plan, baseline, ActionsContext.from_env)
    if decider is not None and decider.baseline is None:
        # said now, not first at compare time: these results hold only the first round of every case
        print(
            "warning: adaptive runs had no baseline to decide against, so no case gets its extra runs: a comparison "
            "of these results may not confirm a broken case; pass --baseline FILE (a baseline made with --all-runs), "
            "or --all-runs",
            file=sys.stderr,
        )
    return plan, decider
