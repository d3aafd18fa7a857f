"""The exit code.

`run` alone follows `adk eval` 2.13 (success only when every case passed); `compare` applies the gate policy
(`gate/policy.py`) to the comparison with the baseline.
"""

from __future__ import annotations

from adk_eval_gate.results.results_format import ResultsFile

EXIT_PASS = 0
EXIT_FAIL = 1


def exit_code_for(results: ResultsFile) -> int:
    summary = results.summary
    return EXIT_PASS if summary.total > 0 and summary.passed == summary.total else EXIT_FAIL


def exit_code_for_decision(verdict: str) -> int:
    return EXIT_PASS if verdict == "pass" else EXIT_FAIL
