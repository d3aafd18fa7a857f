"""The console script: parse, check the arguments, run one subcommand, map every outcome to an exit code.

Exit codes: 0 pass, 1 failed (or a GitHub API error), 2 bad input (one line, never a traceback), 3 a file could
not be written (a full disk, a quota, a read-only folder: one line naming the file).
"""

from __future__ import annotations

import errno
import os
import sys
import traceback
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, nullcontext
from pathlib import Path
from types import TracebackType

from adk_eval_gate.core.errors import InputError, WriteError
from adk_eval_gate.core.held_tokens import held, holding
from adk_eval_gate.core.interpreter import restored_interpreter
from adk_eval_gate.core.redaction import RedactingStream
from adk_eval_gate.targets.host_pool import AgentHostPool

_DISK_ERRORS = (errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EFBIG)


def main(argv: Sequence[str] | None = None, *, own_process: bool | None = None) -> int:
    """`own_process`: the process ends with this command (the console script; the Action's container entry says so
    itself). Otherwise (a test, a caller in process) whatever the run changes in the interpreter (sys.path,
    variables, the collector) is put back after it; a process that ends anyway skips that, since handing a large
    frozen run back to the collector would only cost a last full collection at exit."""
    if argv is None:  # the console script: a process of its own, which nothing started yet (core/isolation.py)
        isolate_console_process(runs_pull_request_code=sys.argv[1:2] in (["ci"], ["run"]))
    ends_with_command = argv is None if own_process is None else own_process
    # GitHub's tokens leave the environment for the call only, however it was called.
    with holding(), nullcontext() if ends_with_command else restored_interpreter():
        hosts = AgentHostPool()  # this command's agent hosts, handed down to the run (targets/host_pool.py)
        _start_agent_host(list(sys.argv[1:] if argv is None else argv), hosts)
        try:
            with redacted_console():
                return _main(argv, hosts)
        finally:
            hosts.finish()  # a host the command never took (an argument refused) is discarded, not left waiting


def isolate_console_process(runs_pull_request_code: bool = True) -> None:
    """Before anything starts: GitHub's tokens out of every environment, this process out of its children's reach,
    and, for a command that runs the pull request's code, one line for what this platform or the parent process
    leaves open (docs/trust.md)."""
    from adk_eval_gate.core.isolation import exposed_ancestor, isolate_process

    problems = isolate_process()
    if not runs_pull_request_code:  # `publish`, `merge`, `status`: none of the pull request's code runs beside it
        return
    # CI (set by GitHub and most CI services): on a developer's machine the token in the shell is their own.
    parent = exposed_ancestor() if os.environ.get("CI") and held() else None
    if not problems and parent is None:
        return
    from adk_eval_gate.github.workflow_commands import warn

    if problems:
        warn(f"the pull request's code may reach GitHub's token: {'; '.join(problems)} (docs/trust.md)")
    if parent is not None:
        pid, command, names = parent
        warn(
            f"{command} (pid {pid}), a parent of this process, holds {', '.join(names)} in its own environment, "
            "where the pull request's code can read it; give the token to the Action's `github-token` input "
            "instead of the step's `env:` (docs/trust.md)"
        )


def _start_agent_host(tokens: list[str], hosts: AgentHostPool) -> None:
    """`run --config FILE`: the agent host starts importing google-adk before this process imports the parser and
    the stages (see targets/host_start.py). Only `run`: `ci` names no agent before it has checked who asked."""
    if not tokens or tokens[0] != "run":
        return
    config = next(
        (
            token.partition("=")[2] if token.startswith("--config=") else following
            for token, following in zip(tokens, [*tokens[1:], None], strict=True)
            if token.startswith("--config=") or (token == "--config" and following is not None)
        ),
        None,
    )
    if not config:
        from adk_eval_gate.commands.config_file import find_config

        found = find_config(Path.cwd())  # `run` without --config uses the nearest eval-gate.yml
        if found is None:
            return
        config = str(found)
    hosts.start_early(Path(config))


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


def _quiet_broken_pipe() -> int:
    """A reader that stopped early (`| head`) is not an error worth a traceback: end as a SIGPIPE'd program would."""
    _discard_stdout()
    return 128 + 13


def _discard_stdout() -> None:
    """What is left in stdout's buffer goes nowhere: the interpreter's final flush must not fail again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):
        pass


def _main(argv: Sequence[str] | None, hosts: AgentHostPool) -> int:
    from adk_eval_gate.commands.arguments import check_arguments, check_outputs
    from adk_eval_gate.commands.config_file import place_outputs, resolve_config
    from adk_eval_gate.commands.parser import build_parser
    from adk_eval_gate.github import workflow_commands

    args = build_parser().parse_args(argv)
    args.agent_hosts = hosts
    # Importing the user's agent must not leave __pycache__ folders in their repository (nor after a refusal).
    sys.dont_write_bytecode = True
    for stream in (sys.stdout, sys.stderr):  # agent text printed to a log must never crash the command
        if hasattr(stream, "reconfigure"):
            stream.reconfigure(errors="backslashreplace")
    try:
        resolve_config(args)
        place_outputs(args)
        check_arguments(args)
        check_outputs(args)
        code: int = args.handler(args)  # every subcommand registers a handler returning its exit code
        sys.stdout.flush()
        return code
    except BrokenPipeError:
        return _quiet_broken_pipe()
    except InputError as exc:
        workflow_commands.input_error(exc)
        return exc.exit_code
    except Exception as exc:
        from adk_eval_gate.github.client import GitHubError

        if isinstance(exc, OSError) and exc.errno in _DISK_ERRORS:
            # a write not made through core/files.py (a library's, or our standard output redirected to a full
            # disk, which names no file): the same one line, the same exit code
            failed = WriteError(exc.filename or "<standard output>", exc)
            if not exc.filename:
                _discard_stdout()
            workflow_commands.input_error(failed)
            return failed.exit_code
        if not isinstance(exc, GitHubError):
            raise
        hint = "; the token cannot write here (a fork's pull request?)" if exc.read_only else ""
        workflow_commands.error(f"{exc}{hint}")
        return 1
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
