"""The pytest plugin's public module path (the `pytest11` entry point, `-p adk_eval_gate.pytest_plugin`, a
conftest's `pytest_plugins`): kept so configurations written for earlier releases keep working. The plugin
itself lives in `integrations/pytest_plugin.py`."""

from adk_eval_gate.integrations.pytest_plugin import *  # noqa: F403
from adk_eval_gate.integrations.pytest_plugin import __all__  # noqa: F401
