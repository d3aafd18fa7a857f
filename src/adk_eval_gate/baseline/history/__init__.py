"""The default branch's history: a bounded, schema-versioned record of every default-branch run, kept where the
baseline is kept. It gives the gate a memory across merges — a drift gate against an older state, the cases known
to be flaky, and trends (docs/history-and-drift.md).

The public API: `load_history` (read, before comparing), `next_history` (after a default-branch run: what
its store saves with the baseline),
`history_view` (what one comparison takes from it), `trend_data` (the series for other reports).
"""

from __future__ import annotations

from adk_eval_gate.baseline.history.database import StoredHistory
from adk_eval_gate.baseline.history.io import (
    CARRIED_FILE_NAME,
    FILE_NAME,
    LEGACY_FILE_NAME,
    HistoryError,
    HistoryState,
    HistoryStep,
    history_text,
    load_history,
    next_history,
    parse_history,
    parse_json_history,
    write_json,
)
from adk_eval_gate.baseline.history.record_format import History, HistoryRecord
from adk_eval_gate.baseline.history.records import record_of
from adk_eval_gate.baseline.history.trend import sparkline, trend_data
from adk_eval_gate.baseline.history.view import HistoryView, history_summary, history_view

__all__ = [
    "CARRIED_FILE_NAME",
    "FILE_NAME",
    "LEGACY_FILE_NAME",
    "History",
    "HistoryError",
    "HistoryRecord",
    "HistoryState",
    "HistoryStep",
    "HistoryView",
    "StoredHistory",
    "history_summary",
    "history_text",
    "history_view",
    "load_history",
    "next_history",
    "parse_history",
    "parse_json_history",
    "record_of",
    "sparkline",
    "trend_data",
    "write_json",
]
