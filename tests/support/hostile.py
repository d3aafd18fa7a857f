"""Shared by the hostile-input tests: the rule every bad input must follow, and a per-call time limit."""

from __future__ import annotations

import signal
from contextlib import contextmanager
from pathlib import Path

from adk_eval_gate.commands.main import main


class Hung(Exception):
    pass


@contextmanager
def time_limit(seconds: float):
    """A hang (a blocking open, an endless walk) fails the test instead of stalling the suite."""

    def expire(signum, frame):
        raise Hung(f"no answer within {seconds}s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def snapshot(folder: Path) -> set[str]:
    return {str(p.relative_to(folder)) for p in folder.rglob("*")} if folder.exists() else set()


def assert_bad_input(argv: list[str], folder: Path, capsys, *fragments: str, seconds: float = 20) -> str:
    before = snapshot(folder)
    capsys.readouterr()
    with time_limit(seconds):
        try:
            code = main(argv)
        except SystemExit as exc:  # argparse
            code = exc.code
    captured = capsys.readouterr()
    assert code == 2, captured
    lines = captured.err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), captured.err
    assert "Traceback" not in captured.err
    for fragment in fragments:
        assert fragment in lines[0], f"{fragment!r} not in {lines[0]!r}"
    assert snapshot(folder) == before, "a run that ended in exit 2 left files behind"
    return lines[0]


def run_cli(argv: list[str], capsys, seconds: float = 20) -> tuple[int, str, str]:
    capsys.readouterr()
    with time_limit(seconds):
        try:
            code = main(argv)
        except SystemExit as exc:  # argparse
            code = exc.code
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def assert_rule(argv: list[str], folder: Path, capsys, seconds: float = 20) -> int:
    """Whatever the input, the tool answers (0 pass, 1 fail) or refuses it by the rule: exit 2, one line, no file."""
    before = snapshot(folder)
    code, _, err = run_cli(argv, capsys, seconds)
    assert code in (0, 1, 2), (code, err)
    assert "Traceback" not in err
    if code == 2:
        lines = err.splitlines()
        assert len(lines) == 1 and lines[0].startswith("error: "), err
        assert snapshot(folder) == before, "exit 2 left files behind"
    return code
