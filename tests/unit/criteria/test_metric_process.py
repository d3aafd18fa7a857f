"""The custom metric process is an object its run owns (issue #37, item 5): each judge has its own, started at the
first call, and closing it ends the process; no module keeps one. Real processes throughout."""

from __future__ import annotations

import os

import pytest

from adk_eval_gate.criteria.engine.judge import Judge
from adk_eval_gate.criteria.engine.metric_process import MetricProcess
from adk_eval_gate.llm.cache import LlmCache
from adk_eval_gate.llm.client import LlmClient, LlmSettings

# a function that cannot be imported: the process answers at once, without running any code of a pull request
CALL = {"name": "m", "path": "no_such_module_here.fn", "options": {}, "actual": [], "expected": None, "scenario": None}


def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


def test_each_judge_owns_its_metric_process_and_closing_it_ends_the_process(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    first, second = (Judge(LlmClient(LlmSettings(retries=0), LlmCache(None))) for _ in range(2))
    assert first.metric_process is not second.metric_process
    assert first.metric_process.pid is None  # nothing started before the first call
    answers = [judge.metric_process.call(CALL) for judge in (first, second)]
    assert all("could not import" in str(answer.get("not_evaluable")) for answer in answers), answers
    pids = first.metric_process.pid, second.metric_process.pid
    assert None not in pids and pids[0] != pids[1] and os.getpid() not in pids
    first.close()
    assert first.metric_process.pid is None and _gone(pids[0])
    assert second.metric_process.pid == pids[1] and not _gone(pids[1])  # the other run's process lives on
    second.close()
    assert _gone(pids[1])


def test_a_closed_metric_process_starts_again_at_the_next_call(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    process = MetricProcess()
    process.call(CALL)
    before = process.pid
    process.close()
    process.call(CALL)
    assert process.pid not in (None, before)
    process.close()


def test_no_module_keeps_a_metric_process(tmp_path, monkeypatch):
    import adk_eval_gate.criteria.custom_function as custom_function
    import adk_eval_gate.criteria.engine.metric_process as metric_process

    monkeypatch.chdir(tmp_path)
    process = MetricProcess()
    process.call(CALL)
    try:
        for module in (custom_function, metric_process):
            for name, value in vars(module).items():
                inside = value if isinstance(value, list | tuple | set) else [value]
                assert not any(type(v).__name__ in ("MetricProcess", "_Child") for v in inside), f"{module}.{name}"
    finally:
        process.close()


@pytest.fixture(autouse=True)
def _no_tokens(monkeypatch):
    monkeypatch.delenv("GITHUB_TOKEN", raising=False)
