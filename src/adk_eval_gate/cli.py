"""Command line: `validate`, `run`, `compare`, `baseline`, `ci`, `merge`, `publish`, `schema`.
Exit codes: 0 pass, 1 failed, 2 bad input."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from . import __version__
from .errors import EXIT_BAD_INPUT, InputError


def _validate(args: argparse.Namespace) -> int:
    import asyncio

    from .criteria.safety import missing_project
    from .llm.client import has_credentials
    from .plan import build_plan
    from .targets import build_target

    plan = build_plan(args.config)

    async def check_targets() -> None:  # each target checks its own inputs: actuals parse, the agent imports
        for agent in plan.agents:
            target = build_target(agent.agent, plan.workflow.base_dir)
            try:
                await target.start()
            finally:
                await target.aclose()

    asyncio.run(check_targets())
    for agent in plan.agents:
        cases = sum(len(s.file.eval_set.eval_cases) for s in agent.eval_sets)
        print(f"{agent.name}: {len(agent.eval_sets)} eval set(s), {cases} case(s), target {agent.agent.settings.target.kind}")
        for eval_set in agent.eval_sets:
            names = ", ".join(c.name for c in eval_set.criteria)
            print(f"  {plan.relative(eval_set.file.path)} [{eval_set.eval_set_id}]: "
                  f"{len(eval_set.file.eval_set.eval_cases)} case(s); criteria ({eval_set.criteria_source}): {names}")
            for criterion in eval_set.criteria:
                if criterion.spec.unavailable_reason:
                    print(f"    note: {criterion.name} will be reported as not evaluated: {criterion.spec.unavailable_reason}")
                elif criterion.name == "safety_v1" and (missing := missing_project()):
                    print(f"    note: {missing}; until then it will be reported as not evaluated")
                elif criterion.spec.judge_scorer is not None and criterion.name != "safety_v1" and not has_credentials():
                    print(f"    note: {criterion.name} needs a judge: without GOOGLE_API_KEY (or Vertex AI settings) "
                          "it will be reported as not evaluated")
    print(f"{args.config}: OK")
    return 0


def _decider(args: argparse.Namespace, plan):
    """Adaptive runs decide against a baseline: --baseline, else the config's store; --all-runs skips deciding
    (every case gets num_runs.max, as a push run building the baseline does)."""
    from .sampling.decider import Decider, has_adaptive_runs

    if args.all_runs or not has_adaptive_runs(plan):
        return None
    if args.baseline:
        from .results.build import read_results

        path = Path(args.baseline)
        if not path.is_file():
            raise InputError(None, "--baseline", f"no results file at {path}", "pass a baseline results file, or "
                             "--all-runs to run every case num_runs.max times")
        return Decider(read_results(path))
    from .baseline.stores import build_store
    from .github.context import ActionsContext

    if plan.workflow.settings.baseline.store == "none":
        return Decider(None)
    outcome = build_store(plan.workflow, ActionsContext.from_env()).load()
    for warning in outcome.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    return Decider(outcome.baseline.results if outcome.baseline else None)


def _run(args: argparse.Namespace) -> int:
    from .gate import exit_code_for
    from .pipeline import run_plan
    from .plan import build_plan
    from .report.console import render_table
    from .results.build import write_results

    plan = build_plan(args.config)
    results = run_plan(plan, quiet=args.quiet, decider=_decider(args, plan))
    write_results(results, Path(args.output))
    if results.interrupted:
        print(f"stopped early ({results.stop_reason}); finished cases were scored and written", file=sys.stderr)
    if not args.quiet:
        print(render_table(results))
    print(f"results written to {args.output}")
    return exit_code_for(results)


def _compare(args: argparse.Namespace) -> int:
    from .baseline import build_comparison
    from .baseline.stores import LoadedBaseline, LoadOutcome, build_store, identity_of
    from .config.loader import load_workflow
    from .config.models import GateSettings
    from .files import write_text_atomic
    from .gate import exit_code_for_decision
    from .github.context import ActionsContext
    from .report.console import render_comparison
    from .results.build import read_results

    current = read_results(Path(args.results))
    workflow = load_workflow(args.config) if args.config else None
    gate = workflow.settings.gate if workflow else GateSettings()
    context = ActionsContext.from_env()
    max_age = getattr(workflow.settings.baseline, "max_age_days", None) if workflow else None
    if args.baseline:
        path = Path(args.baseline)
        if path.exists():
            baseline_results = read_results(path)
            outcome = LoadOutcome(LoadedBaseline(baseline_results, identity_of(baseline_results, str(path))))
        else:
            outcome = LoadOutcome(None, [f"no baseline file at {path}"])
    elif workflow:
        outcome = build_store(workflow, context).load()
    else:
        outcome = LoadOutcome(None, ["no --baseline and no --config: nothing to compare with"])
    comparison = build_comparison(current, outcome, gate, [*context.labels, *(args.label or [])], max_age_days=max_age)
    if args.output:
        write_text_atomic(Path(args.output), comparison.model_dump_json(indent=2) + "\n")
    print(render_comparison(comparison))
    return exit_code_for_decision(comparison.verdict)


def _baseline(args: argparse.Namespace) -> int:
    from .baseline.stores import build_store
    from .config.loader import load_workflow
    from .results.build import read_results

    workflow = load_workflow(args.config)
    store = build_store(workflow)
    if args.action == "update":
        if not args.results:
            raise InputError(None, "--results", "is required for `baseline update`", "pass the results file to bless")
        where = store.save(read_results(Path(args.results)))
        print(f"baseline updated: {where}")
        return 0
    outcome = store.load()
    for warning in outcome.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    if outcome.baseline is None:
        print("no baseline")
        return 0
    identity, results = outcome.baseline.identity, outcome.baseline.results
    age = f"{identity.age_days:.1f} days old" if identity.age_days is not None else "age unknown"
    print(f"baseline: {identity.source}\n  commit {identity.sha or 'unknown'}, created {identity.created_at} ({age}), "
          f"adk-eval-gate {identity.tool_version}")
    for eval_set in results.eval_sets:
        s = eval_set.summary
        print(f"  {eval_set.agent}/{eval_set.eval_set_id}: {s.total} cases, {s.passed} passed, criteria: {', '.join(eval_set.criteria)}")
    return 0


def _ci_options(args: argparse.Namespace):
    from .ci import CiOptions
    from .shards import parse_shard

    return CiOptions(config=args.config, output_dir=args.output_dir, post_comment=not args.no_comment,
                     labels=args.label or [], quiet=getattr(args, "quiet", False), comment_key=args.comment_key,
                     shard=parse_shard(args.shard) if getattr(args, "shard", None) else None)


def _ci(args: argparse.Namespace) -> int:
    from .ci import run_ci

    return run_ci(_ci_options(args))


def _merge(args: argparse.Namespace) -> int:
    from .ci import finish
    from .github.context import ActionsContext
    from .plan import build_plan
    from .results.build import read_results
    from .shards import merge_results

    merged = merge_results([read_results(Path(p)) for p in args.results])
    return finish(_ci_options(args), build_plan(args.config), merged, ActionsContext.from_env())


def _publish(args: argparse.Namespace) -> int:
    from .publish import run_publish

    return run_publish(args.dir, args.comment_key)


def _schema(args: argparse.Namespace) -> int:
    from .schemas import json_schema_text

    sys.stdout.write(json_schema_text(args.kind))
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="adk-eval-gate", description="Gate pull requests on ADK agent evaluations.")
    parser.add_argument("--version", action="version", version=f"adk-eval-gate {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    validate = commands.add_parser("validate", help="check the config, every eval set and its criteria (exit 0 or 2)")
    validate.add_argument("--config", required=True, help="the workflow YAML file")
    validate.set_defaults(handler=_validate)

    run = commands.add_parser("run", help="run the agents, score every case, write the results file")
    run.add_argument("--config", required=True, help="the workflow YAML file")
    run.add_argument("--output", default="adk-eval-results.json", help="where to write the results JSON")
    run.add_argument("--quiet", action="store_true", help="print neither progress lines nor the per-case table")
    run.add_argument("--baseline", help="adaptive runs (num_runs: {min, max}) decide against this results file "
                     "(default: the config's baseline store)")
    run.add_argument("--all-runs", action="store_true", help="adaptive agents run every case num_runs.max times, "
                     "as a push run building the baseline does")
    run.set_defaults(handler=_run)

    ci = commands.add_parser("ci", help="the whole pipeline as the GitHub Action runs it (mode from the event)")
    ci.add_argument("--config", required=True, help="the workflow YAML file")
    ci.add_argument("--output-dir", default="adk-eval-gate-out", help="where results, comparison, report and JUnit go")
    ci.add_argument("--no-comment", action="store_true", help="do not post the pull request comment")
    ci.add_argument("--label", action="append", help="an extra pull request label (e.g. the override label)")
    ci.add_argument("--comment-key", help="the sticky comment's key (default: the config file's name)")
    ci.add_argument("--quiet", action="store_true", help="no progress lines")
    ci.add_argument("--shard", help="run only shard i of n (e.g. 2/4); `merge` then gates the whole")
    ci.set_defaults(handler=_ci)

    merge = commands.add_parser("merge", help="combine shard results, then compare, report, comment and gate once")
    merge.add_argument("results", nargs="+", help="every shard's results.json")
    merge.add_argument("--config", required=True, help="the workflow YAML file the shards ran")
    merge.add_argument("--output-dir", default="adk-eval-gate-out")
    merge.add_argument("--no-comment", action="store_true")
    merge.add_argument("--label", action="append")
    merge.add_argument("--comment-key")
    merge.set_defaults(handler=_merge)

    publish = commands.add_parser("publish", help="post a fork pull request's report from its artifact (workflow_run)")
    publish.add_argument("--dir", required=True, help="the downloaded adk-eval-gate-out artifact")
    publish.add_argument("--comment-key", help="the sticky comment's key (default: the one the run recorded)")
    publish.set_defaults(handler=_publish)

    compare = commands.add_parser("compare", help="compare results with a baseline and apply the gate (exit 0 pass, 1 fail)")
    compare.add_argument("--results", required=True, help="the current results file")
    compare.add_argument("--baseline", help="a baseline results file (default: the config's baseline store)")
    compare.add_argument("--config", help="the workflow YAML (gate policy and baseline store)")
    compare.add_argument("--output", default="comparison.json", help="where to write the comparison JSON")
    compare.add_argument("--label", action="append", help="a pull request label (repeatable; e.g. the override label)")
    compare.set_defaults(handler=_compare)

    baseline = commands.add_parser("baseline", help="show the stored baseline or bless a results file as the new one")
    baseline.add_argument("action", choices=["show", "update"])
    baseline.add_argument("--config", required=True, help="the workflow YAML (its baseline section)")
    baseline.add_argument("--results", help="with update: the results file to store")
    baseline.set_defaults(handler=_baseline)

    schema = commands.add_parser("schema", help="print the JSON Schema of a file format")
    schema.add_argument("kind", choices=["results", "comparison"])
    schema.set_defaults(handler=_schema)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return args.handler(args)
    except InputError as exc:
        print(f"error: {exc.render()}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except Exception as exc:
        from .github.client import GitHubError

        if not isinstance(exc, GitHubError):
            raise
        hint = "; the token cannot write here (a fork's pull request?)" if exc.read_only else ""
        print(f"error: {exc}{hint}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    raise SystemExit(main())
