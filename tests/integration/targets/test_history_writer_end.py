"""A finished run ends: the history writer (targets/historian.py) gets every byte the run sent it, and ends once the
run has gone, however far behind it was when the run finished (a loaded machine, where the writer runs at a low
priority). Real parts: the bundled example's agent, its agent host, the writer; the writer is held back with
SIGSTOP, as a busy machine holds it back."""

from __future__ import annotations

import json
import os
import signal
import threading
import time
from pathlib import Path

from adk_eval_gate.commands.main import main
from adk_eval_gate.targets import agent_host
from adk_eval_gate.targets.host_messages import HoldInvocations, pack


def _children(pid: int) -> list[int]:
    found = []
    for task in os.listdir(f"/proc/{pid}/task"):
        found += [int(c) for c in Path(f"/proc/{pid}/task/{task}/children").read_text().split()]
    return found


def _nice(pid: int) -> int:
    return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[16])


def _with_history(example: Path) -> Path:
    config = example / "eval-gate.yml"
    config.write_text(config.read_text().replace("agent: hello_world}", "agent: hello_world, eval_history: true}"))
    return config


def test_a_run_ends_at_once_though_its_history_writer_was_behind_when_it_finished(example, monkeypatch):
    """The run's last bytes to the writer were still queued when it released the host: they must be sent (and the
    connection closed) before this process stops serving its connections, or the writer waits for the rest of a
    message that never comes, the host waits on the writer and the run on the host, until the host's backstop
    (`children_grace`, five minutes) kills the writer, with the history lost."""
    release = agent_host.AgentHost.release
    held_back: list[int] = []

    async def release_behind_the_writer(self):
        if self._historian is not None:
            (writer,) = [p for p in _children(self._process.pid) if _nice(p) == 10]  # historian.py's os.nice(10)
            os.kill(writer, signal.SIGSTOP)
            held_back.append(writer)
            # More than the socket holds, so some is still queued in this process when the run lets go.
            padding = {"invocation_id": "padding", "user_content": {"role": "user", "parts": [{"text": "x" * 2**21}]}}
            self._historian.write(pack(HoldInvocations(("padding",), [padding])))
            threading.Timer(1.0, os.kill, (writer, signal.SIGCONT)).start()
        await release(self)

    monkeypatch.setattr(agent_host.AgentHost, "release", release_behind_the_writer)
    monkeypatch.setenv("ADK_EVAL_GATE_HOST_TIMEOUTS", "children_grace=60")
    config = _with_history(example)
    started = time.monotonic()
    code = main(["run", "--config", str(config), "--output", str(example / "out" / "results.json"), "--quiet"])
    took = time.monotonic() - started
    assert held_back, "the history writer never connected: nothing was tested"
    assert code in (0, 1)
    assert took < 30, f"the run took {took:.0f} s: it waited for the host's backstop"
    (history,) = (example / "hello_world" / ".adk" / "eval_history").glob("*.evalset_result.json")
    results = json.loads((example / "out" / "results.json").read_text())
    written = {c["eval_id"] for c in json.loads(history.read_text())["eval_case_results"]}
    assert written == {c["eval_id"] for c in results["eval_sets"][0]["cases"]}


def test_a_history_writer_that_never_takes_its_data_is_cut_off_and_named(example, monkeypatch, capfd):
    """A writer that never reads again (stopped for good here; hung, in life) costs the run `history_send`, then
    the host's `children_grace`, not five minutes; each step says which process it gave up on."""
    release = agent_host.AgentHost.release
    stopped: list[int] = []

    async def release_with_the_writer_stopped(self):
        if self._historian is not None:
            (writer,) = [p for p in _children(self._process.pid) if _nice(p) == 10]
            os.kill(writer, signal.SIGSTOP)
            stopped.append(writer)
            padding = {"invocation_id": "padding", "user_content": {"role": "user", "parts": [{"text": "x" * 2**21}]}}
            self._historian.write(pack(HoldInvocations(("padding",), [padding])))
        await release(self)

    monkeypatch.setattr(agent_host.AgentHost, "release", release_with_the_writer_stopped)
    monkeypatch.setenv("ADK_EVAL_GATE_HOST_TIMEOUTS", "history_send=1,children_grace=2")
    started = time.monotonic()
    main(["run", "--config", str(_with_history(example)), "--output", str(example / "r.json"), "--quiet"])
    took = time.monotonic() - started
    assert stopped, "the history writer never connected: nothing was tested"
    assert took < 30
    err = capfd.readouterr().err
    assert f"ADK eval history writer (pid {stopped[0]}) took nothing sent to it within 1 s" in err
    assert f"killed the ADK eval history writer (pid {stopped[0]}), still running 2 s after the run ended" in err
