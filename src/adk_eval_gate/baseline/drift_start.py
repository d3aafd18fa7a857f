"""Where a drift began: the merge at which the default branch's slide started, found by a change-point over the
history's records (docs/history-and-drift.md, "Where the slide began").

The series is one value per record, oldest first, from the drift gate's reference to the base: the agent's mean
case score on the criterion (the mean over its eval sets, as the trend shows it). Two shapes of decline are fitted
at every record t, each one regressor against a flat line: a *step* (level until t, lower from t on: the
standardized CUSUM of a mean shift) and a *slide* (level until t, then falling by the same amount each merge: a
broken stick whose hinge is before t). Each fit's statistic is how much of the series' squared deviation it
explains, counted only for a decline; the best shape and record over all of them names the merge where the
decline began — for a step the merge that made it, for a slide of many small merges the first of them (binary
segmentation on means would name the slide's middle).

The p-value is a permutation test of that largest statistic: under "no change" the records' values are
exchangeable, and taking the maximum over every record and both shapes is part of the statistic, so searching
for the best split is accounted for. Every ordering is enumerated up to 7 records (7! = 5,040); beyond, 2,000
orderings are drawn (seeded; fewer, at least 200, for a series of hundreds of records, and at most the newest 500
records are searched), the observed one counted among them so the p-value stays valid. The merge is named
either way; below `LEVEL` the change is called significant, otherwise the reason says the records alone do not
single it out.
"""

from __future__ import annotations

import itertools
import math
import random
from collections.abc import Sequence
from typing import Literal

from pydantic import BaseModel, Field

from adk_eval_gate.core.numbers import STORED_FILE, Count, Unit

LEVEL = 0.05  # a split this significant on its own segment is a change, not the records' noise
EXACT_RECORDS = 7
DRAWS = 2_000
# A pinned reference may lie thousands of records back: the newest this many are searched, and fewer orderings
# are drawn for a long series (at least 200: p-values down to 0.005), so a locator never costs more than a second.
MAX_SERIES = 500
WORK = 400_000

Point = tuple[str, str, float]  # a record's commit, date and value


class DriftStart(BaseModel):
    """The merge where a drift's decline began: the first record below the level before it."""

    model_config = STORED_FILE

    sha: str
    date: str
    merges: Count = Field(description="Records after the drift reference: 1 is the first merge after it.")
    shape: Literal["step", "slide"] = Field(description="A step at this merge, or a slide that began with it.")
    before: float = Field(description="Mean of the records before it (from the reference on).")
    after: float = Field(description="Mean of the records from it to the base.")
    p_value: Unit = Field(description="Permutation p-value of the change-point (the best over every record).")
    significant: bool = Field(description=f"p below {LEVEL}: a change, not the records' own noise.")


Fit = tuple[float, int, str]  # explained squared deviation, first record of the decline, shape


def _scan(values: Sequence[float]) -> Fit:
    """The best declining fit over every record and both shapes; (0, 0, "step") when nothing declines."""
    n = len(values)
    mean = math.fsum(values) / n
    ones, weighted = [0.0] * (n + 1), [0.0] * (n + 1)  # suffix sums of deviations, plain and times t
    for t in range(n - 1, -1, -1):
        ones[t] = ones[t + 1] + values[t] - mean
        weighted[t] = weighted[t + 1] + t * (values[t] - mean)
    best: Fit = (0.0, 0, "step")
    for t in range(1, n):
        m = n - t  # records from t on
        step_cov, step_var = ones[t], t * m / n
        slide_cov = weighted[t] - (t - 1) * ones[t]  # regressor 1, 2, …, m from t on
        slide_var = m * (m + 1) * (2 * m + 1) / 6 - (m * (m + 1) / 2) ** 2 / n
        for cov, var, shape in ((step_cov, step_var, "step"), (slide_cov, slide_var, "slide")):
            if cov < 0 and var > 0 and cov * cov / var > best[0] + 1e-12:
                best = (cov * cov / var, t, shape)
    return best


def change_p_value(values: Sequence[float], seed: int = 0) -> float:
    """P(the best declining fit explains at least as much) over orderings of the values."""
    observed = _scan(values)[0] - 1e-12
    if len(values) <= EXACT_RECORDS:
        orders = list(itertools.permutations(values))
        return sum(_scan(order)[0] >= observed for order in orders) / len(orders)
    rng = random.Random(seed)
    shuffled = list(values)
    hits, draws = 1, max(200, min(DRAWS, WORK // len(values)))
    for _ in range(draws):
        rng.shuffle(shuffled)
        hits += _scan(shuffled)[0] >= observed
    return hits / (draws + 1)


def locate(points: Sequence[Point], seed: int = 0) -> DriftStart | None:
    """The merge where the decline began; None with fewer than two records or no decline anywhere."""
    offset = max(0, len(points) - MAX_SERIES)
    points = points[offset:]
    values = [value for _, _, value in points]
    if len(values) < 2:
        return None
    explained, at, shape = _scan(values)
    if explained <= 0:
        return None
    p = change_p_value(values, seed)
    sha, date, _ = points[at]
    return DriftStart(
        sha=sha,
        date=date,
        merges=at + offset,
        shape="step" if shape == "step" else "slide",
        before=math.fsum(values[:at]) / at,
        after=math.fsum(values[at:]) / (len(values) - at),
        p_value=min(1.0, p),
        significant=p < LEVEL,
    )
