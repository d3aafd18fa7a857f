"""The collector tuning large commands use leaves the interpreter as it found it, however the command ends."""

from __future__ import annotations

import gc

import pytest

from adk_eval_gate.core.collector import BULK_THRESHOLD, bulk_data, read_again, reading_again


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


def test_a_later_load_is_read_with_the_collector_off_and_frozen_with_the_rest() -> None:
    with bulk_data() as loaded:
        loaded()
        first = gc.get_freeze_count()
        made_by_the_run = [[i] for i in range(1000)]  # young: the collector would walk these again and again
        reading_again()
        assert not gc.isenabled()
        baseline = [[i] for i in range(1000)]
        read_again()
        assert gc.isenabled() and gc.get_threshold() == BULK_THRESHOLD
        assert gc.get_freeze_count() >= first + len(made_by_the_run) + len(baseline)
        read_again()  # once only: a second call changes nothing
        assert gc.isenabled()
    assert gc.isenabled() and gc.get_freeze_count() == 0


def test_a_later_load_does_nothing_outside_a_loaded_bulk_command() -> None:
    reading_again()  # `merge` shares the load step but not the tuning: nothing changes
    assert gc.isenabled()
    read_again()
    assert gc.isenabled() and gc.get_freeze_count() == 0
    with bulk_data():
        reading_again()  # before the first load ended: the collector stays as that load set it
        read_again()
        assert not gc.isenabled() and gc.get_freeze_count() == 0


def test_a_later_load_cut_short_still_gives_the_collector_back() -> None:
    before = gc.get_threshold()
    with pytest.raises(RuntimeError), bulk_data() as loaded:
        loaded()
        reading_again()
        raise RuntimeError  # the baseline could not be read: read_again never comes
    assert gc.isenabled() and gc.get_threshold() == before and gc.get_freeze_count() == 0
