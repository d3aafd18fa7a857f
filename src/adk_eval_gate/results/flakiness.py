"""What "flaky" means, once, for every place that says it (report.html's tag, the history's labels, quarantine).

A case × criterion is flaky when it disagrees with itself: the runs of one commit do not all agree on pass/fail,
or its outcome turned (pass ↔ fail) at least `TURNS` times from commit to commit. The unit is a run's outcome for
that one criterion (`RunMetric.status`, ADK's own verdict on the run), however many turns the run has: a
multi-turn case whose second turn fails in every run fails every run — deterministic, not flaky. Two criteria of
one case never make a disagreement either: each is judged on its own.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

from adk_eval_gate.results.results_format import MetricResult

# (runs that passed, runs with a pass/fail outcome) of one case × criterion in one commit's run.
RunOutcomes = tuple[int, int]

TURNS = 3  # outcome changes from commit to commit that only chance explains (one: a change; two: broke, then fixed)


def run_outcomes(metric: MetricResult) -> RunOutcomes:
    """The runs that passed, of those that passed or failed: an errored or not-evaluated run has no outcome, and
    counting it either way would invent one."""
    statuses = [run.status for run in metric.runs if run is not None and run.status in ("passed", "failed")]
    return sum(status == "passed" for status in statuses), len(statuses)


def disagrees(outcomes: RunOutcomes) -> bool:
    """Some run of the commit passed and another failed."""
    passed, runs = outcomes
    return 0 < passed < runs


def turns(commits: Sequence[RunOutcomes]) -> int:
    """How often the outcome changed from one commit to the next, over commits whose runs all agreed."""
    states = [passed == runs for passed, runs in commits if runs and not disagrees((passed, runs))]
    return sum(a != b for a, b in itertools.pairwise(states))


def is_flaky(commits: Sequence[RunOutcomes]) -> bool:
    """`commits` oldest first, each one commit's outcomes of one case × criterion."""
    return any(disagrees(c) for c in commits) or turns(commits) >= TURNS


def fails_every_run(commits: Sequence[RunOutcomes]) -> bool:
    """At least one run with an outcome, and not one of them passed."""
    return sum(runs for _, runs in commits) > 0 and sum(passed for passed, _ in commits) == 0
