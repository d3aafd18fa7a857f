"""The versions of the files we write. Here, below every stage, because more than one stage reads a file: the
replay target reads results files as recorded actuals, the baseline stores read them as baselines."""

from typing import Final

RESULTS_SCHEMA_VERSION: Final = 1
# The comparison file (baseline/comparison_format.py). 2: the gate's failures and notes are data beside their sentences
# (baseline/decision_records.py); 1 (failures as sentences alone) is still read.
COMPARISON_SCHEMA_VERSION: Final = 2  # Final: the Literal[1, 2] model field takes it as its default
# The default branch's history (baseline/history): its own version, bumped apart from the results file's.
# 2: records may hold agents-cli metrics on their own scale (`CriterionRecord.own_scale`); 1 is still read.
# 3: records may hold pass^k tallies (`CaseRecord`) and what scored the run besides the code
#    (`HistoryRecord.provenance`); 1 and 2 are still read.
HISTORY_SCHEMA_VERSION: Final = 3  # Final: a Literal[1, 2, 3] model field takes it as its default
HISTORY_SCHEMA_READ: Final = (1, 2, 3)
# The history as stored (baseline/history/database.py): a SQLite database; 1 was the JSON file history.json, still
# read (and migrated) and still the shape of `history show --json`.
# 3: its records are schema_version 2 (agents-cli metrics); a database of 2 is read and rewritten as 3.
# 4: its records are schema_version 3 (pass^k tallies, provenance); a database of 2 or 3 is read and rewritten as 4.
HISTORY_DATABASE_VERSION = 4
HISTORY_DATABASE_READ: Final = ("2", "3", "4")
