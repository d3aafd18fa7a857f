"""How many LLM-judged scores a run is missing, and why: one line for the console summary and the comment headline.

A reviewer must see at a glance that "no regression" also means "8 scores were never judged" — a fork without
credentials and a judge that never answered look alike in a table of blanks.
"""

from __future__ import annotations

import re
from collections import Counter

from adk_eval_gate.criteria.registry import REGISTRY
from adk_eval_gate.results.results_format import MetricResult, ResultsFile

_LABELS = {
    "judge_unavailable": "judge unavailable",
    "unparseable_reply": "judge reply unreadable",
    "internal_error": "internal error",
    "no_credentials": "no judge credentials",
    "budget_spent": "judge budget spent",
    "unsupported": "not supported by this build",
    "not_applicable": "not applicable to the case",
}
_ERRORS = ("judge_unavailable", "unparseable_reply", "internal_error")
_ATTEMPTS = re.compile(r"after (\d{1,3}) attempts")


def _label(metric: MetricResult) -> str:
    label = _LABELS[metric.cause] if metric.cause else "no score"
    # Only digits are taken from the reason: in the fork flow it is the fork's text.
    if metric.cause == "judge_unavailable" and (found := _ATTEMPTS.search(metric.reason or "")):
        label += f" after {found.group(1)} attempts"
    return label


def missing_judged_scores(results: ResultsFile) -> Counter[str]:
    """Per reason, the case × criterion results of LLM-judged criteria that have no score (errors first)."""
    counts: Counter[str] = Counter()
    errors: Counter[str] = Counter()
    for eval_set in results.eval_sets:
        for case in eval_set.cases:
            for name, metric in case.metrics.items():
                spec = REGISTRY.get(name)
                if spec is None or not spec.judged or metric.score is not None or metric.cause is None:
                    continue
                (errors if metric.cause in _ERRORS else counts)[_label(metric)] += 1
    return Counter(dict([*errors.most_common(), *counts.most_common()]))


def missing_judged_line(results: ResultsFile) -> str | None:
    """E.g. "12 judged scores missing: 8 no judge credentials, 4 judge unavailable after 5 attempts"."""
    counts = missing_judged_scores(results)
    total = sum(counts.values())
    if not total:
        return None
    parts = ", ".join(f"{count} {label}" for label, count in counts.items())
    return f"{total} judged score{'s' if total > 1 else ''} missing: {parts}"
