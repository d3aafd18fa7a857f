"""GitHub's size limit on a comment and the room a report keeps under it for our hidden lines."""

from __future__ import annotations

COMMENT_LIMIT = 65_536
BUDGET = 60_000  # room for the hidden markers and GitHub's own accounting
