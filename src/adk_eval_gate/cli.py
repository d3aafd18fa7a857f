"""Command line: `validate`, `run`, `compare`, `baseline`, `ci`, `merge`, `publish`, `init`, `schema`.
Exit codes: 0 pass, 1 failed, 2 bad input."""

from __future__ import annotations

import argparse
import gc
import os
import sys
import traceback
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, NoReturn

from . import __version__, log
from .errors import EXIT_BAD_INPUT, InputError
from .redaction import RedactingStream

if TYPE_CHECKING:
    from .config.loader import Workflow


def _plan(config: str, *, warm_up: bool = False):
    """The config alone is checked first: its errors come before importing the eval-set and criteria machinery
    (google-genai, rouge), which takes seconds, so rejecting a bad config stays instant. `warm_up` starts the
    agent host (google-adk's import) alongside."""
    if warm_up:
        from .targets.host_start import warm_up_early

        warm_up_early(Path(config))
    from .config.loader import load_workflow

    workflow = load_workflow(config)
    if warm_up:
        from .targets.agent_host import warm_up as name_agents

        name_agents(workflow)
    from .plan import plan_for

    return plan_for(workflow)  # the config is read and parsed once


def _validate(args: argparse.Namespace) -> int:
    import asyncio

    plan = _plan(args.config)
    from .criteria.vertex_metrics import VERTEX_METRICS
    from .criteria.vertex_service import missing_project
    from .llm.client import has_credentials
    from .targets import build_target

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
                elif criterion.name in VERTEX_METRICS:
                    if missing := missing_project(criterion.name):
                        print(f"    note: {missing}; until then it will be reported as not evaluated")
                elif criterion.spec.judged and not has_credentials():
                    print(f"    note: {criterion.name} needs a judge: without GOOGLE_API_KEY (or Vertex AI settings) "
                          "it will be reported as not evaluated")
    print(_baseline_line(plan.workflow))
    print(f"{args.config}: OK")
    return 0


def _baseline_line(workflow: Workflow) -> str:
    """Said at validate time, because a gate without a baseline compares nothing and passes on regressions."""
    settings = workflow.settings.baseline
    if settings.store == "none":
        return "baseline: NONE (baseline.store: none): nothing will be compared, so no regression can fail the gate"
    if settings.store == "file":
        where = workflow.base_dir / settings.path
        if not where.exists():
            return (f"baseline: NONE yet: {settings.path} does not exist, so nothing will be compared; "
                    "create it with `adk-eval-gate baseline update` and commit it")
        return f"baseline: the file {settings.path}"
    if settings.store == "branch":
        return f"baseline: branch {settings.branch} (written by pushes to the default branch; needs `contents: write`)"
    return (f"baseline: artifact {settings.name!r} of the newest completed push run on the pull request's base branch "
            "(the push workflow must upload adk-eval-gate-out/results.json under that name; pull requests need "
            "`actions: read`); until one exists nothing is compared")


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
    try:
        return _run_and_report(args)
    finally:
        from .targets.agent_host import finish_warm_up

        finish_warm_up()


def _run_and_report(args: argparse.Namespace) -> int:
    plan = _plan(args.config, warm_up=True)
    from .gate import exit_code_for
    from .pipeline import run_plan
    from .plan import select_cases
    from .report.console import render_table
    from .results.build import write_results

    if args.cases:
        plan = select_cases(plan, args.cases)
    # Everything imported and loaded so far lives until exit: the collector need not walk it again and again
    # while the run decodes results, and runs less often (most garbage here goes with its last reference).
    gc.freeze()
    gc.set_threshold(20_000, 50, 100)
    results = run_plan(plan, quiet=args.quiet, decider=_decider(args, plan))
    write_results(results, Path(args.output))
    if results.interrupted:
        print(f"stopped early ({results.stop_reason}); finished cases were scored and written", file=sys.stderr)
    if args.print_detailed_results:
        from .evaluator import print_case_details

        expected = {(a.name, s.eval_set_id, c.eval_id): list(c.conversation or [])
                    for a in plan.agents for s in a.eval_sets for c in s.file.eval_set.eval_cases}
        for eval_set in results.eval_sets:
            for case in eval_set.cases:
                print_case_details(eval_set.eval_set_id, case, expected[(eval_set.agent, eval_set.eval_set_id, case.eval_id)])
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

    for option, value in (("--results", args.results), ("--baseline", args.baseline)):
        # A path the user typed: a typo must not turn into "no baseline", which passes.
        if value and not os.path.lexists(value):
            raise InputError(None, option, f"no file at {value}",
                             "pass an existing results file (relative paths resolve against the working directory)")
    current = read_results(Path(args.results))
    workflow = load_workflow(args.config) if args.config else None
    gate = workflow.settings.gate if workflow else GateSettings()
    context = ActionsContext.from_env()
    max_age = getattr(workflow.settings.baseline, "max_age_days", None) if workflow else None
    if args.baseline:
        baseline_results = read_results(Path(args.baseline))
        outcome = LoadOutcome(LoadedBaseline(baseline_results, identity_of(baseline_results, args.baseline)))
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
        results = read_results(Path(args.results))
        _refuse_partial(results, args.config, args.results)
        where = store.save(results)
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


COMMENT_CHOICES = {"--comment-mode": ("update", "recreate"), "--comment-when": ("always", "changed", "failing")}


def _refuse_partial(results, config: str, path: str) -> None:
    from .plan import build_plan
    from .shards import why_not_a_baseline

    if why := why_not_a_baseline(results, build_plan(config)):
        raise InputError(path, None, f"is not a baseline: {why}", "bless the results of a full run (`merge` every shard first)")


def _ci_options(args: argparse.Namespace):
    from .ci import CiOptions
    from .shards import parse_shard

    # checked here rather than by argparse, so that the Action's inputs fail as one line (an annotation there)
    for option, choices in COMMENT_CHOICES.items():
        value = getattr(args, option.removeprefix("--").replace("-", "_"))
        if value is not None and value not in choices:
            raise InputError(None, option, f"{value!r} is not one of {', '.join(choices)}",
                             f"use one of them (the Action's input is {option.removeprefix('--')})")
    return CiOptions(config=args.config, output_dir=args.output_dir, post_comment=not args.no_comment,
                     labels=args.label or [], quiet=getattr(args, "quiet", False), comment_key=args.comment_key,
                     shard=parse_shard(args.shard) if getattr(args, "shard", None) else None,
                     comment_mode=args.comment_mode, comment_when=args.comment_when, comment_author=args.comment_author,
                     cases=getattr(args, "cases", None) or [])


def _ci(args: argparse.Namespace) -> int:
    from .config.loader import load_workflow

    load_workflow(args.config)  # as in _plan: config errors before the heavy imports
    from .ci import run_ci

    return run_ci(_ci_options(args))


def _merge(args: argparse.Namespace) -> int:
    plan = _plan(args.config)
    from .ci import finish
    from .github.context import ActionsContext
    from .results.build import read_results
    from .shards import merge_results

    merged = merge_results([(p, read_results(Path(p))) for p in args.results], plan)
    return finish(_ci_options(args), plan, merged, ActionsContext.from_env())


def _publish(args: argparse.Namespace) -> int:
    from .publish import run_publish

    return run_publish(args.dir, args.config, args.comment_key, output_dir=args.output_dir)


def _init(args: argparse.Namespace) -> int:
    from .init import init, next_steps

    result = init(Path(args.dir), branch=args.branch)
    print(result.summary())
    print(next_steps(result.branch))
    return 0


def _schema(args: argparse.Namespace) -> int:
    from .schemas import json_schema_text

    sys.stdout.write(json_schema_text(args.kind))
    return 0


def _comment_options(parser: argparse.ArgumentParser) -> None:
    """Over the config's `comment:` section."""
    parser.add_argument("--comment-mode", help="update (edit our comment in place) or recreate (delete it, post anew)")
    parser.add_argument("--comment-when", help="always, changed (the report changed) or failing (the gate fails)")
    parser.add_argument("--comment-author", help="the login the token posts as, when GitHub cannot say (another App's token)")


class _Parser(argparse.ArgumentParser):
    """Usage errors are one line, like every other bad input, with the way to the full usage."""

    def error(self, message: str) -> NoReturn:
        first = " ".join(message.split())
        self.exit(EXIT_BAD_INPUT, f"error: {self.prog}: {first}; see `{self.prog} --help`\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="adk-eval-gate", description="Gate pull requests on ADK agent evaluations.")
    parser.add_argument("--version", action="version", version=f"adk-eval-gate {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    validate = commands.add_parser("validate", help="check the config, every eval set and its criteria (exit 0 or 2)")
    validate.add_argument("--config", required=True, help="the workflow YAML file")
    validate.set_defaults(handler=_validate)

    run = commands.add_parser("run", help="run the agents, score every case, write the results file")
    run.add_argument("--config", required=True, help="the workflow YAML file")
    run.add_argument("--output", default="adk-eval-results.json", help="where to write the results JSON")
    run.add_argument("--quiet", action="store_true", help="print neither progress lines nor the per-case table")
    run.add_argument("--print-detailed-results", "--print_detailed_results", action="store_true",
                     help="print every metric's per-invocation scores, prompts, responses and tool calls (as adk eval does)")
    run.add_argument("--cases", action="append", metavar="SET[:CASES]",
                     help="only these cases, as `adk eval` picks them: eval_set_id_or_file[:case1,case2] (globs allowed; repeatable)")
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
    ci.add_argument("--comment-key", help="the sticky comment's key (default: the config's path in the repository)")
    _comment_options(ci)
    ci.add_argument("--quiet", action="store_true", help="no progress lines")
    ci.add_argument("--shard", help="run only shard i of n (e.g. 2/4); `merge` then gates the whole")
    ci.add_argument("--cases", action="append", metavar="SET[:CASES]",
                    help="only these cases, as `adk eval` picks them: eval_set_id_or_file[:case1,case2] (globs allowed; "
                    "repeatable); such a run is never stored as the baseline")
    ci.set_defaults(handler=_ci)

    merge = commands.add_parser("merge", help="combine shard results, then compare, report, comment and gate once")
    merge.add_argument("results", nargs="+", help="every shard's results.json")
    merge.add_argument("--config", required=True, help="the workflow YAML file the shards ran")
    merge.add_argument("--output-dir", default="adk-eval-gate-out")
    merge.add_argument("--no-comment", action="store_true")
    merge.add_argument("--label", action="append")
    merge.add_argument("--comment-key")
    _comment_options(merge)
    merge.set_defaults(handler=_merge)

    publish = commands.add_parser("publish", help="post a fork pull request's report from its artifact (workflow_run)")
    publish.add_argument("--dir", required=True, help="the downloaded adk-eval-gate-out artifact (only its results are used)")
    publish.add_argument("--config", required=True, help="the base branch's workflow YAML (checked out by the trusted "
                         "workflow): its gate policy and baseline store judge the fork's results")
    publish.add_argument("--comment-key", help="the sticky comment's key (default: the config's path in the repository, as `ci`)")
    publish.add_argument("--output-dir", default="adk-eval-gate-published", help="where the trusted comparison and report go")
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

    init = commands.add_parser("init", help="write eval-gate.yml and a GitHub workflow for this repository's ADK agents")
    init.add_argument("--dir", default=".", help="the repository root (default: here)")
    init.add_argument("--branch", help="the default branch the workflow stores baselines from (default: git's)")
    init.set_defaults(handler=_init)

    schema = commands.add_parser("schema", help="print the JSON Schema of a file format")
    schema.add_argument("kind", choices=["results", "comparison"])
    schema.set_defaults(handler=_schema)
    return parser


# Files each command writes, checked before any work so a bad path neither costs a run nor leaves files behind.
_OUTPUT_FILES = {"run": ("output",), "compare": ("output",)}
_OUTPUT_DIRS = {"ci": "output_dir", "merge": "output_dir"}
_DIR_FILES = ("results.json", "comparison.json", "junit.xml", "report.md", "pull-request.json")
_GITHUB_FILES = {"ci": ("GITHUB_STEP_SUMMARY", "GITHUB_OUTPUT"), "merge": ("GITHUB_STEP_SUMMARY", "GITHUB_OUTPUT"),
                 "publish": ("GITHUB_STEP_SUMMARY",)}


def _check_arguments(args: argparse.Namespace) -> None:
    """Arguments that were not valid UTF-8 cannot be written into a results file, a comparison or a comment."""
    from .files import has_surrogates

    for name, value in vars(args).items():
        for item in value if isinstance(value, list) else [value]:
            if isinstance(item, str) and has_surrogates(item):
                raise InputError(None, f"--{name.replace('_', '-')}", f"{item.encode('utf-8', 'backslashreplace').decode()!r} is not valid UTF-8",
                                 "pass UTF-8 text (rename the file if it is a path)")


def _check_outputs(args: argparse.Namespace) -> None:
    from .files import check_output_dir, check_output_file

    for name in _OUTPUT_FILES.get(args.command, ()):
        if getattr(args, name, None) is not None:
            check_output_file(getattr(args, name), f"--{name.replace('_', '-')}")
    written: set[Path] = set()
    if (name := _OUTPUT_DIRS.get(args.command)) is not None:
        folder = check_output_dir(getattr(args, name), f"--{name.replace('_', '-')}")
        for file in _DIR_FILES:
            if (folder / file).exists():
                check_output_file(folder / file, f"--{name.replace('_', '-')}")
        # GitHub's files must not be what we write, nor a folder we create on the way to it
        written = {folder.absolute(), *folder.absolute().parents, *(folder.absolute() / file for file in _DIR_FILES)}
    for variable in _GITHUB_FILES.get(args.command, ()):
        if os.environ.get(variable):
            path = check_output_file(os.environ[variable], variable, append=True)
            if path.absolute() in written:
                raise InputError(None, variable, f"{path} is where this command writes its own output",
                                 "point it at GitHub's file, outside --output-dir")


def _quiet_broken_pipe() -> int:
    """A reader that stopped early (`| head`) is not an error worth a traceback: end as a SIGPIPE'd program would."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())  # the interpreter's final flush must not fail again
    except (OSError, ValueError, AttributeError):
        pass
    return 128 + 13


def main(argv: Sequence[str] | None = None) -> int:
    with redacted_console():
        return _main(argv)


@contextmanager
def redacted_console() -> Iterator[None]:
    """Whatever we, an in-process agent or a library print: no secret reaches the log."""
    saved = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = RedactingStream(sys.stdout), RedactingStream(sys.stderr)
    # A crash's traceback is printed after this block has restored the streams, and its messages can quote
    # anything (an agent's output, a request): it goes through a redacting stream too.
    sys.excepthook = _redacted_excepthook
    try:
        yield
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        sys.stdout, sys.stderr = saved


def _redacted_excepthook(kind: type[BaseException], value: BaseException, tb: TracebackType | None) -> None:
    traceback.print_exception(kind, value, tb, file=RedactingStream(sys.stderr))


def _main(argv: Sequence[str] | None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    # Importing the user's agent must not leave __pycache__ folders in their repository (nor after a refusal).
    sys.dont_write_bytecode = True
    for stream in (sys.stdout, sys.stderr):  # agent text printed to a log must never crash the command
        if hasattr(stream, "reconfigure"):
            stream.reconfigure(errors="backslashreplace")
    try:
        _check_arguments(args)
        _check_outputs(args)
        code = args.handler(args)
        sys.stdout.flush()
        return code
    except BrokenPipeError:
        return _quiet_broken_pipe()
    except InputError as exc:
        log.input_error(exc)
        return EXIT_BAD_INPUT
    except Exception as exc:
        from .github.client import GitHubError

        if not isinstance(exc, GitHubError):
            raise
        hint = "; the token cannot write here (a fork's pull request?)" if exc.read_only else ""
        log.error(f"{exc}{hint}")
        return 1
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    raise SystemExit(main())
