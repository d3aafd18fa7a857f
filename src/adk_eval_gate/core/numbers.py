"""Numbers in the files we write and read back (results and baselines, comparisons, the history): finite and bounded
by their types, so that no reader of such a file can forget to check them.

JSON from Python's json module, and pydantic's own parser, accept `NaN`, `Infinity` and `-Infinity`; a NaN
compares false with everything, so a NaN threshold or mean silently turns a test off instead of failing it. Every
model of a stored file takes `STORED_FILE` as its config, which refuses a non-finite float in any field, nested
or not; the types below add the ranges. A count that sizes work (the samples a drift test expands into pass/fail
lists) is bounded by what a real run can produce, so a forged one is refused instead of exhausting memory.

Finite is not enough: 1.7e308 is finite, and the sum of two of them is not (`statistics.fmean` raises
OverflowError, a plain sum turns into inf and `int(inf)` raises). Every score, threshold, cost and duration the
gate reads — from a metric (code metrics, custom functions, judges), a results file (ours or agents-cli's), a
history — is within ±`MAX_MAGNITUDE`, where it enters. ADK's criteria score in [0, 1] and its rubric judges 1..5;
agents-cli's custom metrics may return any float (a word count, a latency): 10^12 is far past any of them, and a
sum of 10^7 such values (a whole record's samples) stays below 10^20, nowhere near a float's limit.
"""

from __future__ import annotations

import math
from typing import Annotated

from pydantic import ConfigDict, Field

STORED_FILE = ConfigDict(extra="forbid", allow_inf_nan=False)

# The config's cap on `num_runs` (config/workflow_settings.py): no stored file can hold more runs of a case.
MAX_RUNS = 100
# Samples of one case × criterion are runs × turns: 100 runs of a 1,000-turn conversation, far past any eval set.
MAX_CASE_SAMPLES = 100_000
# The drift test expands every sample of a record into a list entry (8 bytes each): 10 million samples, about
# 80 MB, is a whole record of 1,000 cases × 5 criteria × 100 runs × 20 turns and no more.
MAX_RECORD_SAMPLES = 10_000_000
# Any other count (tokens, calls, cases): 2**53 is the largest integer a float holds exactly, so sums and means
# of counts stay exact; a larger one is not a count any run produced.
MAX_COUNT = 2**53

# The largest magnitude of any score, threshold, cost or duration read (see above); larger is refused or an error.
MAX_MAGNITUDE = 1e15

Finite = Annotated[float, Field(ge=-MAX_MAGNITUDE, le=MAX_MAGNITUDE, allow_inf_nan=False)]
Unit = Annotated[float, Field(ge=0, le=1, allow_inf_nan=False)]
NonNegative = Annotated[float, Field(ge=0, le=MAX_MAGNITUDE, allow_inf_nan=False)]
Count = Annotated[int, Field(ge=0, le=MAX_COUNT)]
RunCount = Annotated[int, Field(ge=1, le=MAX_RUNS)]
SampleCount = Annotated[int, Field(ge=0, le=MAX_CASE_SAMPLES)]


def in_range(value: float) -> bool:
    """A number the gate can add up: finite and within ±`MAX_MAGNITUDE` (a metric's score, a cost, a duration)."""
    return math.isfinite(value) and -MAX_MAGNITUDE <= value <= MAX_MAGNITUDE


def out_of_range(value: object) -> str:
    """Why `value` is not taken as a score: the one phrase every reader uses, with the documented range."""
    return f"{value!r} is not a finite number within ±{MAX_MAGNITUDE:g}"
