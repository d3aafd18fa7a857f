"""Where a turn's tool calls first departed from the expected ones, in one short line: `expected roll_die(sides=6),
got roll_dice(sides=6)`, `expected roll_die(sides=6), got no call`, `an extra call check_prime(n=7)`.

Made where the expected turns are in hand (scoring), stored as the turn's `detail` in results.json, and read by the
report (`gate/plain.py`) to say what changed for the user. Argument values are the agent's text: every call is
masked and clipped (core/clip.py) before it is kept.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from google.genai import types as genai_types

from adk_eval_gate.core.clip import clip

Call = genai_types.FunctionCall

_CALL_CHARS = 56  # two calls and the words around them stay within a 120-character line
_VALUE_CHARS = 24


def show_call(call: Call) -> str:
    """`name(key=value, …)`, masked and clipped: values as JSON (a string quoted, so "1" and 1 read apart)."""
    args = ", ".join(f"{key}={_value(value)}" for key, value in (call.args or {}).items())
    return clip(f"{call.name or '?'}({args})", _CALL_CHARS)


def _value(value: object) -> str:
    try:
        text = json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)
    except ValueError:  # a circular value cannot come from JSON, but a live object might hold one
        text = repr(value)
    return clip(text, _VALUE_CHARS)


def _same(actual: Call, expected: Call, ignore_args: bool) -> bool:
    return actual.name == expected.name and (ignore_args or actual.args == expected.args)


def _differs(expected: Call | None, actual: Call | None) -> str:
    if expected is None and actual is not None:
        return f"an extra call {show_call(actual)}"
    got = show_call(actual) if actual is not None else "no call"
    return f"expected {show_call(expected) if expected is not None else 'no call'}, got {got}"


def exact_divergence(actual: Sequence[Call], expected: Sequence[Call], ignore_args: bool = False) -> str | None:
    """The first position where the two lists differ (EXACT), or None when they match."""
    for index in range(max(len(actual), len(expected))):
        got = actual[index] if index < len(actual) else None
        wanted = expected[index] if index < len(expected) else None
        if got is None or wanted is None or not _same(got, wanted, ignore_args):
            return _differs(wanted, got)
    return None


def in_order_divergence(actual: Sequence[Call], expected: Sequence[Call], ignore_args: bool = False) -> str | None:
    """The first expected call the greedy in-order match (as ADK's) could not find, beside the call the agent made
    in its place (the first after the last matched one), or None when every expected call was found."""
    position, after = 0, 0
    for index, call in enumerate(actual):
        if position < len(expected) and _same(call, expected[position], ignore_args):
            position, after = position + 1, index + 1
    if position == len(expected):
        return None
    return _differs(expected[position], actual[after] if after < len(actual) else None)


def any_order_divergence(actual: Sequence[Call], expected: Sequence[Call], ignore_args: bool = False) -> str | None:
    """The first expected call no distinct actual call matched (ANY_ORDER), or None."""
    pool = list(actual)
    for wanted in expected:
        found = next((i for i, call in enumerate(pool) if _same(call, wanted, ignore_args)), None)
        if found is None:
            return f"expected {show_call(wanted)}, got no such call"
        del pool[found]
    return None
