"""The versions of the files we write. Here, below every stage, because more than one stage reads a file: the
replay target reads results files as recorded actuals, the baseline stores read them as baselines."""

from typing import Final

RESULTS_SCHEMA_VERSION: Final = 1
# The default branch's history (baseline/history): its own version, bumped apart from the results file's.
HISTORY_SCHEMA_VERSION: Final = 1  # Final: a Literal[1] model field takes it as its default
# The history as stored (baseline/history/database.py): a SQLite database; 1 was the JSON file history.json, still
# read (and migrated) and still the shape of `history show --json`.
HISTORY_DATABASE_VERSION = 2
