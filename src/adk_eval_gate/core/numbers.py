"""Numbers in the files we write and read back (results and baselines, comparisons, the history): finite and bounded
by their types, so that no reader of such a file can forget to check them.

JSON from Python's json module, and pydantic's own parser, accept `NaN`, `Infinity` and `-Infinity`; a NaN
compares false with everything, so a NaN threshold or mean silently turns a test off instead of failing it. Every
model of a stored file takes `STORED_FILE` as its config, which refuses a non-finite float in any field, nested
or not; the types below add the ranges. A count that sizes work (the samples a drift test expands into pass/fail
lists) is bounded by what a real run can produce, so a forged one is refused instead of exhausting memory.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import ConfigDict, Field

STORED_FILE = ConfigDict(extra="forbid", allow_inf_nan=False)

# The config's cap on `num_runs` (config/models.py): no stored file can hold more runs of a case.
MAX_RUNS = 100
# Samples of one case × criterion are runs × turns: 100 runs of a 1,000-turn conversation, far past any eval set.
MAX_CASE_SAMPLES = 100_000
# The drift test expands every sample of a record into a list entry (8 bytes each): 10 million samples, about
# 80 MB, is a whole record of 1,000 cases × 5 criteria × 100 runs × 20 turns and no more.
MAX_RECORD_SAMPLES = 10_000_000
# Any other count (tokens, calls, cases): 2**53 is the largest integer a float holds exactly, so sums and means
# of counts stay exact; a larger one is not a count any run produced.
MAX_COUNT = 2**53

Finite = Annotated[float, Field(allow_inf_nan=False)]
Unit = Annotated[float, Field(ge=0, le=1, allow_inf_nan=False)]
NonNegative = Annotated[float, Field(ge=0, allow_inf_nan=False)]
Count = Annotated[int, Field(ge=0, le=MAX_COUNT)]
RunCount = Annotated[int, Field(ge=1, le=MAX_RUNS)]
SampleCount = Annotated[int, Field(ge=0, le=MAX_CASE_SAMPLES)]
