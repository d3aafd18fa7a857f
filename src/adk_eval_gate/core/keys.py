"""The identity of one case across files, runs and commits."""

from __future__ import annotations

from typing import NamedTuple


class CaseKey(NamedTuple):
    """A case is named by its agent, its eval set and its id: the same eval id in two eval sets is two cases.

    A tuple underneath, so it compares, hashes and sorts like the `(agent, eval_set_id, eval_id)` it replaces."""

    agent: str
    eval_set_id: str
    eval_id: str

    def __str__(self) -> str:
        return f"{self.agent}/{self.eval_set_id}/{self.eval_id}"
