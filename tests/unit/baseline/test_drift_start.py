"""Where a drift began (issue 36.5): the change-point locator on simulated histories — a step, a slow slide that
began at a known merge, and an unchanged agent whose records only wobble."""

from __future__ import annotations

import random

from adk_eval_gate.baseline.drift_start import change_p_value, locate


def _points(values: list[float]) -> list[tuple[str, str, float]]:
    return [(f"{i:04d}".ljust(40, "a"), f"2026-11-{i % 28 + 1:02d}", v) for i, v in enumerate(values)]


def test_a_step_is_found_at_its_merge():
    rng = random.Random(1)
    hits = 0
    for _ in range(40):
        values = [0.9 + rng.gauss(0, 0.01) for _ in range(6)] + [0.8 + rng.gauss(0, 0.01) for _ in range(5)]
        start = locate(_points(values))
        assert start is not None and start.significant
        hits += start.merges == 6
    assert hits >= 38
    found = locate(_points([0.9] * 6 + [0.8] * 5))
    assert found is not None and found.sha.startswith("0006") and found.before == 0.9 and found.after == 0.8
    assert found.shape == "step"


def test_a_slow_slide_is_traced_back_to_where_it_began():
    rng = random.Random(2)
    close = 0
    for _ in range(25):
        values = [0.95 + rng.gauss(0, 0.005) for _ in range(8)]
        values += [0.95 - 0.02 * (i + 1) + rng.gauss(0, 0.005) for i in range(10)]  # slides from record 8 on
        start = locate(_points(values))
        assert start is not None and start.significant
        close += abs(start.merges - 8) <= 1 and start.shape == "slide"
    assert close >= 21, close
    # ten merges that each break one more case: the slide began with the first, not in its middle
    even = locate(_points([1 - i / 100 for i in range(11)]))
    assert even is not None and even.merges == 1 and even.shape == "slide" and even.significant


def test_an_unchanged_agent_rarely_shows_a_significant_change():
    rng = random.Random(3)
    alarms = sum(
        bool((s := locate(_points([0.9 + rng.gauss(0, 0.02) for _ in range(12)]))) and s.significant) for _ in range(60)
    )
    assert alarms <= 6


def test_the_p_value_is_exact_for_short_series_and_nothing_to_locate_in_one_record():
    # 1, 1, 0, 0: of the 24 orderings, the 4 that put both ones first explain the most as a decline
    assert change_p_value([1.0, 1.0, 0.0, 0.0]) == 4 / 24
    assert locate(_points([0.9])) is None
    assert locate(_points([0.8, 0.9, 1.0])) is None  # rising only: no drop to locate
    two = locate(_points([0.9, 0.8]))
    assert two is not None and two.merges == 1 and not two.significant


def test_a_long_history_is_searched_in_its_newest_records_within_a_second():
    import time

    values = [0.9] * 1_000 + [0.8] * 200
    started = time.perf_counter()
    start = locate(_points(values))
    assert time.perf_counter() - started < 5  # a loaded CI machine: the budget is about one second
    assert start is not None and start.merges == 1_000 and start.significant and start.shape == "step"
