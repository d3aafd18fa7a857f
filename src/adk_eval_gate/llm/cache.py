"""On-disk, content-addressed cache of model responses (judges and the user simulator).

The key covers everything that could change a verdict: the judge model, the full request (prompt and generation
config), the sample index, the criterion and our prompt-template version. An unchanged re-run therefore makes no
judge call at all, and any edit — to the agent's answer, the reference, a rubric, the template or the model —
misses. Entries are small JSON files in a two-level fan-out, safe to restore with `actions/cache`.
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

from adk_eval_gate.core.errors import InputError, WriteError
from adk_eval_gate.core.files import read_text, write_text_atomic
from adk_eval_gate.core.json_types import JsonObject


def cache_key(**parts: object) -> str:
    return hashlib.sha256(json.dumps(parts, sort_keys=True, ensure_ascii=False, default=str).encode()).hexdigest()


class LlmCache:
    def __init__(self, directory: Path | None) -> None:
        self.directory = directory

    def _path(self, key: str) -> Path:
        assert self.directory is not None
        return self.directory / key[:2] / f"{key}.json"

    def get(self, key: str) -> JsonObject | None:
        if self.directory is None:
            return None
        try:
            # the shared reader: a pipe or device restored into the cache is refused, never waited on
            entry = json.loads(read_text(self._path(key), "cache entry"))
        except (InputError, ValueError, RecursionError):
            return None  # a missing, torn or odd entry is a miss, never an error
        return entry if isinstance(entry, dict) else None  # an entry is an answer object: anything else is odd

    def put(self, key: str, value: JsonObject) -> None:
        """A cache that cannot be written (a full disk) costs the next run its calls, never this run its verdict:
        said once, then the run goes on uncached."""
        if self.directory is None:
            return
        try:
            write_text_atomic(self._path(key), json.dumps(value, ensure_ascii=False))
        except WriteError as exc:
            self.directory = None
            print(f"warning: the judge cache is off for this run: {exc.render()}", file=sys.stderr)
