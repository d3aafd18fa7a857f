"""The eval set the noisy test agent (tests/support/agents/noisy) is run on: one single-turn case per key, each
expecting one `lookup(key)` call. Shared by the adaptive-run and provenance tests and bench/noisy_e2e.py."""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path


def noisy_eval_set(keys: Iterable[str]) -> dict[str, object]:
    cases = [
        {
            "eval_id": key,
            "conversation": [
                {
                    "user_content": {"role": "user", "parts": [{"text": f"Please look up {key}"}]},
                    "final_response": {"role": "model", "parts": [{"text": f"value of {key}"}]},
                    "intermediate_data": {
                        "tool_uses": [{"name": "lookup", "args": {"key": key}}],
                        "intermediate_responses": [],
                    },
                }
            ],
            "session_input": {"app_name": "noisy", "user_id": "u", "state": {}},
        }
        for key in keys
    ]
    return {"eval_set_id": "s", "eval_cases": cases}


def write_noisy_eval_set(folder: Path, keys: Iterable[str]) -> Path:
    """`folder/s.evalset.json` for these keys."""
    path = folder / "s.evalset.json"
    path.write_text(json.dumps(noisy_eval_set(keys)))
    return path
