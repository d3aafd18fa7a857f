"""The versions of the files we write. Here, below every stage, because more than one stage reads a file: the
replay target reads results files as recorded actuals, the baseline stores read them as baselines."""

from typing import Final

RESULTS_SCHEMA_VERSION: Final = 1
# The default branch's history (baseline/history): its own version, bumped apart from the results file's.
HISTORY_SCHEMA_VERSION = 1
