"""Each kind of interpreter state a run changes comes back as it was, whatever the run did to it, and also when
the run raises."""

from __future__ import annotations

import gc
import os
import sys
import types

import pytest

from adk_eval_gate.core.interpreter import (
    restored_environ,
    restored_gc,
    restored_interpreter,
    restored_modules,
    restored_sys_path,
)


def test_sys_path_comes_back_in_place_with_its_order():
    path, before = sys.path, list(sys.path)
    with restored_sys_path():
        sys.path.insert(0, "/nowhere/agents")
        sys.path.remove(before[-1])
    assert sys.path is path and sys.path == before


def test_the_environment_comes_back_set_changed_and_removed_alike(monkeypatch):
    monkeypatch.setenv("GATE_TEST_KEPT", "before")
    monkeypatch.setenv("GATE_TEST_REMOVED", "there")
    monkeypatch.delenv("GATE_TEST_ADDED", raising=False)
    before = dict(os.environ)
    with pytest.raises(RuntimeError), restored_environ():
        os.environ["GATE_TEST_ADDED"] = "from an agent's .env"
        os.environ["GATE_TEST_KEPT"] = "changed"
        del os.environ["GATE_TEST_REMOVED"]
        raise RuntimeError("the run failed")
    assert dict(os.environ) == before


def test_module_entries_overwritten_or_given_up_on_come_back_and_imports_stay():
    json_module = sys.modules["json"]
    with restored_modules():
        sys.modules["json"] = types.ModuleType("json")  # overwritten
        sys.modules["gate_test_optional"] = None  # a negative cache
        sys.modules["gate_test_imported"] = types.ModuleType("gate_test_imported")  # a plain import
        del sys.modules["gc"]
    assert sys.modules["json"] is json_module and "gate_test_optional" not in sys.modules
    assert sys.modules["gc"] is gc and "gate_test_imported" in sys.modules
    del sys.modules["gate_test_imported"]


def test_the_collector_comes_back_switched_tuned_and_unfrozen():
    enabled, threshold = gc.isenabled(), gc.get_threshold()
    assert gc.get_freeze_count() == 0
    with restored_gc():
        gc.disable()
        gc.freeze()
        gc.set_threshold(20_000, 50, 100)
    assert (gc.isenabled(), gc.get_threshold(), gc.get_freeze_count()) == (enabled, threshold, 0)


def test_all_kinds_at_once():
    path, environ, threshold = list(sys.path), dict(os.environ), gc.get_threshold()
    with restored_interpreter():
        sys.path.append("/nowhere")
        os.environ["GATE_TEST_ALL"] = "1"
        gc.set_threshold(1, 1, 1)
    assert (sys.path, dict(os.environ), gc.get_threshold()) == (path, environ, threshold)
