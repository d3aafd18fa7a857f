"""google-adk is an optional dependency: the parity tests need it, a plain `pip install adk-eval-gate` has none.

On the dependency leg without google-adk (`make test-deps-newest`) those tests skip with a visible reason. Where
google-adk is promised (`make test`, the google-adk pin leg) ADK_EVAL_GATE_REQUIRE_ADK=1 turns a missing google-adk
into a failure, so a broken install can never pass as a row of skips.
"""

from __future__ import annotations

import importlib
import os
from types import ModuleType

import pytest


def adk(module: str) -> ModuleType:
    """`google.adk.<module>`, or a skip that says why."""
    try:
        return importlib.import_module(f"google.adk.{module}")
    except ImportError as exc:
        if os.environ.get("ADK_EVAL_GATE_REQUIRE_ADK") == "1":
            raise
        pytest.skip(
            f"needs google-adk, not installed here (pip install 'adk-eval-gate[adk]'): {exc}",
            allow_module_level=True,
        )
