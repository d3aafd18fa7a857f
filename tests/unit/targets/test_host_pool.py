"""The command's agent hosts are an object it creates and hands down (no module holds a run's state), and the
host's waits are named, with defaults a user can override through one environment variable."""

from __future__ import annotations

import ast
import dataclasses
import os
import subprocess
import sys
from pathlib import Path

import pytest

from adk_eval_gate.config.loader import load_workflow
from adk_eval_gate.core.errors import InputError
from adk_eval_gate.targets import agent_host, historian, host_pool, host_process, host_start, worker_process, workers
from adk_eval_gate.targets.host_pool import AgentHostPool
from adk_eval_gate.targets.host_timeouts import ENV_VAR, HostTimeouts, host_timeouts
from tests.integration.targets.test_target_adk import faulty_suite


def test_no_module_of_the_agent_host_holds_mutable_state_of_a_run():
    """What used to be `_warm`, `_finishing`, `_early`, `_run_gone`: module-level lists, flags and globals."""
    for module in (agent_host, host_start, host_pool, host_process, historian, workers, worker_process):
        tree = ast.parse(Path(module.__file__).read_text())
        assert not [node for node in ast.walk(tree) if isinstance(node, ast.Global)], module.__name__
        for node in tree.body:
            if isinstance(node, ast.AnnAssign | ast.Assign):
                value = node.value
                assert not isinstance(value, ast.List | ast.Dict | ast.Set), (module.__name__, ast.unparse(node))
                assert not (isinstance(value, ast.Constant) and isinstance(value.value, bool)), ast.unparse(node)


def test_the_defaults_are_named_and_the_environment_overrides_any_of_them():
    assert host_timeouts({}) == HostTimeouts(
        worker_start=60.0, worker_exit=5.0, exit_report=2.0, children_grace=300.0, host_exit=600.0
    )
    got = host_timeouts({ENV_VAR: " worker_start=180, host_exit = 1800.5 "})
    assert got == dataclasses.replace(HostTimeouts(), worker_start=180.0, host_exit=1800.5)


@pytest.mark.parametrize(
    ("value", "says"),
    [
        ("worker_startt=10", "'worker_startt=10' names none of the host's timeouts"),
        ("worker_start", "'worker_start' names none of the host's timeouts"),
        ("worker_start=soon", "worker_start: 'soon' is not a positive number of seconds"),
        ("host_exit=0", "host_exit: '0' is not a positive number of seconds"),
        ("host_exit=-5", "host_exit: '-5' is not a positive number of seconds"),
        ("host_exit=nan", "host_exit: 'nan' is not a positive number of seconds"),
        ("host_exit=inf", "host_exit: 'inf' is not a positive number of seconds"),
    ],
)
def test_a_bad_timeout_is_one_line_naming_the_variable_and_the_fix(value, says):
    with pytest.raises(InputError) as raised:
        host_timeouts({ENV_VAR: value})
    line = raised.value.render()
    assert line.startswith(f"<input>: {ENV_VAR}: {says}; ") and "\n" not in line


def test_run_refuses_a_bad_timeout_with_exit_code_2_and_no_traceback(tmp_path):
    config = faulty_suite(tmp_path, {"ok": "hello"}, run="run: {workers: 2}\n")
    done = subprocess.run(
        [sys.executable, "-m", "adk_eval_gate", "run", "--config", str(config), "--output", str(tmp_path / "r.json")],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, ENV_VAR: "worker_start=never"},
    )
    assert done.returncode == 2, done.stderr
    assert f"{ENV_VAR}: worker_start: 'never' is not a positive number of seconds" in done.stderr
    assert "Traceback" not in done.stderr and not (tmp_path / "r.json").exists()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the agent host runs on Linux only")
def test_two_pools_are_independent_and_a_warm_host_serves_only_its_own_agents(tmp_path):
    config = faulty_suite(tmp_path, {"ok": "hello"}, run="run: {workers: 2}\n")
    workflow = load_workflow(str(config))
    first, second = AgentHostPool(HostTimeouts()), AgentHostPool(HostTimeouts())
    try:
        first.start_early(config)
        assert first.started and not second.started  # nothing is shared between commands in one process
        first.warm_up(workflow)
        assert first.take([("other_agent", tmp_path)]) is None  # warmed for other agents: discarded, not handed
        assert not first.started
        first.warm_up(workflow)
        taken = first.take([("faulty", tmp_path)])
        assert taken is not None and taken.agents == [("faulty", str(tmp_path.resolve()))]
        assert second.take([("faulty", tmp_path)]) is None
    finally:
        first.finish()
        second.finish()
    assert not first.started
