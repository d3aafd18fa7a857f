"""The fence around the pull request's processes (core/command_files.py, core/descendants.py): every way a process
of the same user can change a runner command file is put back and raised, and what it left running is ended."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from adk_eval_gate.core import descendants
from adk_eval_gate.core.command_files import Fence
from adk_eval_gate.core.errors import CommandFileWritten


@pytest.fixture
def files(tmp_path: Path) -> dict[str, str]:
    folder = tmp_path / "_runner_file_commands"
    folder.mkdir()
    (folder / "set_env_1").write_text("A=1\n")
    (folder / "set_output_1").write_text("")
    (folder / "another_step_file").write_text("kept too\n")
    return {
        "GITHUB_ENV": str(folder / "set_env_1"),
        "GITHUB_OUTPUT": str(folder / "set_output_1"),
        "GITHUB_PATH": str(folder / "add_path_1"),  # named, but not there
    }


def test_nothing_changed_closes_quietly(files):
    fence = Fence.open(files)
    fence.close()
    fence.close()  # a second close does nothing
    assert Path(files["GITHUB_ENV"]).read_text() == "A=1\n"


@pytest.mark.parametrize(
    "attack",
    [
        lambda p: p["GITHUB_ENV"].write_text("A=1\nPYTHONPATH=/tmp/evil\n"),  # appended
        lambda p: p["GITHUB_ENV"].write_text("B=2\n"),  # same size, other bytes
        lambda p: (p["GITHUB_ENV"].unlink(), p["GITHUB_ENV"].symlink_to("/etc/hostname")),  # replaced by a link
        lambda p: p["GITHUB_OUTPUT"].unlink(),  # removed
        lambda p: p["GITHUB_PATH"].write_text("/tmp/evil-bin\n"),  # created
        lambda p: (p["GITHUB_ENV"].parent / "another_step_file").write_text("BASH_ENV=/tmp/x\n"),  # a sibling
    ],
)
def test_every_change_is_put_back_and_raised(files, attack):
    paths = {name: Path(path) for name, path in files.items()}
    before = {p: p.read_bytes() for p in paths["GITHUB_ENV"].parent.iterdir()}
    fence = Fence.open(files)
    attack(paths)
    with pytest.raises(CommandFileWritten) as raised:
        fence.close()
    assert raised.value.exit_code == 1
    message = raised.value.render()
    assert "\n" not in message and "the pull request's code wrote the runner's command file" in message
    after = {p: p.read_bytes() for p in paths["GITHUB_ENV"].parent.iterdir()}
    assert after == before and not paths["GITHUB_ENV"].is_symlink()


def test_an_orphaned_daemon_is_reparented_to_us_and_ended(tmp_path, capsys):
    pid_file = tmp_path / "daemon.pid"
    fence = Fence.open({})
    try:
        # a child that double-forks a sleeper into a new session, then exits: the sleeper is an orphan
        script = (
            "import os, sys, time\n"
            "if os.fork() == 0:\n"
            "    os.setsid()\n"
            "    if os.fork() == 0:\n"
            f"        open({str(pid_file)!r}, 'w').write(str(os.getpid()))\n"
            "        time.sleep(600)\n"
            "    os._exit(0)\n"
        )
        subprocess.run([sys.executable, "-c", script], check=True, timeout=60)
        for _ in range(200):
            if pid_file.exists() and pid_file.read_text():
                break
            time.sleep(0.05)
        pid = int(pid_file.read_text())
        assert descendants.descendants()[pid].parent == os.getpid()  # reparented to us, not to init
    finally:
        fence.close()
    assert f"(pid {pid}), which the pull request's code left running" in capsys.readouterr().err
    assert pid not in descendants.descendants()
    state = descendants._read(pid)
    assert state is None or state.zombie


def test_processes_living_before_the_fence_are_left_alone():
    before = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    try:
        fence = Fence.open({})
        fence.close()
        assert before.poll() is None
    finally:
        before.kill()
        before.wait()


def test_the_pull_requests_code_runs_in_a_process_of_its_own_while_the_runners_files_are_set(monkeypatch):
    """A thread an in-process agent or metric left could write the files after the check: out of process then."""
    from adk_eval_gate.core.command_files import runs_pull_request_code_elsewhere
    from adk_eval_gate.targets.agent_host import in_own_process

    for name in ("GITHUB_ENV", "GITHUB_PATH", "GITHUB_OUTPUT", "GITHUB_STEP_SUMMARY", "GITHUB_STATE"):
        monkeypatch.delenv(name, raising=False)
    assert not runs_pull_request_code_elsewhere() and in_own_process(1)
    monkeypatch.setenv("GITHUB_ENV", "/tmp/_runner_file_commands/set_env_1")
    assert runs_pull_request_code_elsewhere() and not in_own_process(1)


def test_a_file_that_cannot_be_put_back_still_fails_the_run_in_one_line(files):
    folder = Path(files["GITHUB_ENV"]).parent
    fence = Fence.open(files)
    Path(files["GITHUB_ENV"]).write_text("PYTHONPATH=/tmp/evil\n")
    folder.chmod(0o500)  # the pull request's code took the folder's write permission away
    try:
        with pytest.raises(CommandFileWritten) as raised:
            fence.close()
    finally:
        folder.chmod(0o700)
    message = raised.value.render()
    assert "\n" not in message and "this run fails" in message
    # as root the folder's mode stops nothing: the file is put back; otherwise the line says it could not be
    assert "could not be put back" in message or Path(files["GITHUB_ENV"]).read_text() == "A=1\n"


def test_a_left_process_is_named_in_one_printable_line(capsys):
    """Its name is its own to choose: a newline and `::` in it must not become a workflow command of the log."""
    fence = Fence.open({})
    script = (
        "import ctypes, os, time\n"
        "if os.fork() == 0:\n"
        "    ctypes.CDLL(None).prctl(15, b'\\n::warning::x\\x1b', 0, 0, 0)\n"
        "    time.sleep(600)\n"
    )
    subprocess.run([sys.executable, "-c", script], check=True, timeout=60)
    for _ in range(400):  # until it has renamed itself
        if any(p.name.endswith("::warning::x?") for p in descendants.descendants().values()):
            break
        time.sleep(0.025)
    fence.close()
    err = capsys.readouterr().err
    (line,) = [line for line in err.splitlines() if "left running" in line]
    assert line.startswith("ended ?::warning::x? (pid ") and "\x1b" not in err and err.count("\n") == 1


def test_a_process_that_keeps_forking_to_change_its_pid_is_frozen_and_ended(tmp_path):
    # It ignores SIGTERM and forks, the parent exiting, every few milliseconds: whatever pid was listed is gone by
    # the time it is signalled, and no fixed number of rounds catches it. Each generation writes its pid; the
    # fence must leave none running, and none may write after it closed.
    beats = tmp_path / "beats"
    script = (
        "import os, signal, sys, time\n"
        "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
        "if os.fork() != 0: os._exit(0)\n"
        "os.setsid()\n"
        "while True:\n"
        f"    with open({str(beats)!r}, 'a') as f: f.write(f'{{os.getpid()}}\\n')\n"
        "    time.sleep(0.005)\n"
        "    if os.fork() != 0: os._exit(0)\n"
    )
    fence = Fence.open({})
    try:
        subprocess.run([sys.executable, "-c", script], check=True, timeout=60)
        for _ in range(200):
            if beats.exists() and len(beats.read_text().split()) > 20:
                break
            time.sleep(0.05)
        assert len(beats.read_text().split()) > 20, "the hopper never got going"
    finally:
        fence.close()
    written = beats.read_text()
    time.sleep(0.5)
    assert beats.read_text() == written, "a generation of the hopper still ran after the fence closed"
    assert not [
        p for p in descendants.processes().values() if p.pid in {int(x) for x in written.split()[-5:]} and not p.zombie
    ]


def test_processes_that_keep_appearing_past_the_freeze_fail_the_run(monkeypatch):
    # A freeze that cannot finish (new processes keep running) must not be taken for a clean end.
    calls = iter(range(10**6))

    def always_new() -> dict[int, descendants.Process]:
        n = next(calls)
        return {10**7 + n: descendants.Process(10**7 + n, os.getpid(), "hopper", n, zombie=False)}

    monkeypatch.setattr(descendants, "descendants", always_new)
    monkeypatch.setattr(descendants, "_signal", lambda process, number: None)
    with pytest.raises(descendants.DescendantsEscaped):
        descendants.end_new_descendants({}, grace=0.0, freeze_for=0.2)
