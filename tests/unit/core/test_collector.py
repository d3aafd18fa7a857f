"""The collector tuning large commands use leaves the interpreter as it found it, however the command ends."""

from __future__ import annotations

import gc

import pytest

from adk_eval_gate.core.collector import BULK_THRESHOLD, bulk_data


def test_off_while_loading_frozen_after_and_restored_at_the_end() -> None:
    before = gc.get_threshold()
    assert gc.isenabled()
    with bulk_data() as loaded:
        assert not gc.isenabled()  # loading makes no garbage worth walking
        kept = [[i] for i in range(1000)]
        loaded()
        assert gc.isenabled() and gc.get_threshold() == BULK_THRESHOLD
        assert gc.get_freeze_count() >= len(kept)
    assert gc.isenabled() and gc.get_threshold() == before and gc.get_freeze_count() == 0


def test_restored_after_an_error_and_when_the_caller_had_it_off() -> None:
    before = gc.get_threshold()
    gc.disable()
    try:
        with pytest.raises(RuntimeError), bulk_data() as loaded:
            loaded()
            assert not gc.isenabled()  # the caller's choice stands
            raise RuntimeError
        assert not gc.isenabled() and gc.get_threshold() == before and gc.get_freeze_count() == 0
    finally:
        gc.enable()
