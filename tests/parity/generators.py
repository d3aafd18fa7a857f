"""Random eval data that stresses ADK's comparison rules, as plain JSON (fed to ADK's models and ours alike)."""

from __future__ import annotations

import random
from typing import Any

TOOL_NAMES = ["roll_die", "check_prime", "search", "get_weather", "transfer_to_agent", "t"]
KEYS = ["sides", "nums", "q", "city", "id", "a", "b", "nested"]
SCALARS: list[Any] = [0, 1, 1.0, -1, 2, 2.5, "1", "", "x", "Paris", True, False, None, 10**12, 1e-9]


def json_value(rng: random.Random, depth: int = 0) -> Any:
    roll = rng.random()
    if depth >= 3 or roll < 0.55:
        return rng.choice(SCALARS)
    if roll < 0.78:
        return [json_value(rng, depth + 1) for _ in range(rng.randint(0, 3))]
    return {rng.choice(KEYS): json_value(rng, depth + 1) for _ in range(rng.randint(0, 3))}


def args(rng: random.Random) -> dict[str, Any] | None:
    roll = rng.random()
    if roll < 0.08:
        return None
    if roll < 0.16:
        return {}
    return {rng.choice(KEYS): json_value(rng) for _ in range(rng.randint(1, 3))}


def call(rng: random.Random) -> dict[str, Any]:
    payload: dict[str, Any] = {"name": rng.choice(TOOL_NAMES)}
    value = args(rng)
    if value is not None or rng.random() < 0.5:
        payload["args"] = value
    if rng.random() < 0.3:
        payload["id"] = f"adk-{rng.randint(0, 10**6)}"  # ids must never matter
    return payload


def _equivalent(value: Any, rng: random.Random) -> Any:
    """Same value under Python ==, different spelling: 1 -> 1.0, key order shuffled."""
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, int) and rng.random() < 0.5:
        return float(value)
    if isinstance(value, list):
        return [_equivalent(v, rng) for v in value]
    if isinstance(value, dict):
        items = list(value.items())
        rng.shuffle(items)
        return {k: _equivalent(v, rng) for k, v in items}
    return value


def mutate(expected: list[dict[str, Any]], rng: random.Random) -> list[dict[str, Any]]:
    """An actual trajectory near the expected one: extras, drops, swaps, duplicates, arg edits."""
    actual = [{**c, "args": _equivalent(c.get("args"), rng)} if "args" in c else dict(c) for c in expected]
    for _ in range(rng.randint(0, 3)):
        op = rng.random()
        if op < 0.2:
            actual.insert(rng.randint(0, len(actual)), call(rng))
        elif op < 0.35 and actual:
            actual.pop(rng.randrange(len(actual)))
        elif op < 0.55 and len(actual) > 1:
            i, j = rng.sample(range(len(actual)), 2)
            actual[i], actual[j] = actual[j], actual[i]
        elif op < 0.7 and actual:
            actual.insert(rng.randint(0, len(actual)), dict(rng.choice(actual)))
        elif op < 0.8 and actual:
            victim = rng.randrange(len(actual))
            actual[victim] = {**actual[victim], "args": args(rng)}
        elif op < 0.87 and actual:
            victim = rng.randrange(len(actual))
            old = actual[victim].get("args")
            actual[victim] = {**actual[victim], "args": {} if old is None else None}  # None vs {} must differ
        elif op < 0.93 and actual:
            victim = rng.randrange(len(actual))
            old = actual[victim].get("args") or {}
            actual[victim] = {
                **actual[victim],
                "args": {k: str(v) if isinstance(v, int) else v for k, v in old.items()},
            }
    return actual


def trajectory(rng: random.Random) -> list[dict[str, Any]]:
    return [call(rng) for _ in range(rng.choice([0, 0, 1, 1, 2, 3, 4, 6]))]


def intermediate(calls: list[dict[str, Any]], rng: random.Random, events: bool) -> dict[str, Any] | None:
    if not events:
        if not calls and rng.random() < 0.3:
            return None if rng.random() < 0.5 else {}
        return {"tool_uses": calls, "intermediate_responses": []}
    # Inference's shape: calls spread over events, mixed with tool responses and text.
    out: list[dict[str, Any]] = []
    for c in calls:
        parts = [{"function_call": c}]
        if rng.random() < 0.3:
            parts.insert(0, {"text": "thinking about it"})
        out.append({"author": "agent", "content": {"role": "model", "parts": parts}})
        if rng.random() < 0.7:
            out.append(
                {
                    "author": "agent",
                    "content": {
                        "role": "user",
                        "parts": [
                            {"function_response": {"name": c["name"], "response": {"result": 1}, "id": c.get("id")}}
                        ],
                    },
                }
            )
    if rng.random() < 0.3:
        out.append({"author": "agent", "content": None})
    return {"invocation_events": out}


WORDS = [
    "the",
    "The",
    "THE",
    "running",
    "runs",
    "ran",
    "runner",
    "dice",
    "die",
    "rolled",
    "rolling",
    "rolls",
    "prime",
    "primes",
    "numbers",
    "number",
    "is",
    "are",
    "6-sided",
    "sided",
    "I",
    "got",
    "5",
    "42",
    "3.14",
    "café",
    "cafe",
    "naïve",
    "naive",
    "Ｐａｒｉｓ",
    "ﬁle",
    "file",
    "x²",
    "Ünïcödé",
    "straße",
    "STRASSE",
    "中文",
    "字",
    "日本語",
    "ひらがな",
    "カタカナ",
    "한국어",
    "สวัสดีครับ",
    "ภาษาไทย",
    "ລາວ",
    "ខ្មែរ",
    "မြန်မာ",
    "مرحبا",
    "नमस्ते",
    "Привет",
    "привет",
    "😀",
    "👍🏽",
    "e\u0301",
    "can't",
    "don't",
    "hello,",
    "world!!",
    "snake_case",
    "e-mail",
    "U.S.A.",
    "\t",
    "generalization",
    "generalize",
    "connection",
    "connected",
]


def text(rng: random.Random) -> str:
    if rng.random() < 0.07:
        return ""
    n = rng.randint(1, 14)
    separators = [" ", " ", " ", "\n", ", ", ". ", "-", "", "  "]
    return "".join(rng.choice(WORDS) + rng.choice(separators) for _ in range(n)).strip(" ")


def content(rng: random.Random, role: str) -> dict[str, Any] | None:
    roll = rng.random()
    if roll < 0.05:
        return None
    if roll < 0.1:
        return {"role": role, "parts": []}
    parts: list[dict[str, Any]] = [{"text": text(rng)} for _ in range(rng.choice([1, 1, 1, 2, 3]))]
    if rng.random() < 0.15:
        parts.append({"function_call": {"name": "t", "args": {}}})
    if rng.random() < 0.1:
        parts.insert(0, {"text": "a hidden thought", "thought": True})
    return {"role": role, "parts": parts}


def invocation(
    rng: random.Random, calls: list[dict[str, Any]], final: dict[str, Any] | None, events: bool
) -> dict[str, Any]:
    inv: dict[str, Any] = {"user_content": {"role": "user", "parts": [{"text": text(rng) or "hi"}]}}
    if final is not None:
        inv["final_response"] = final
    data = intermediate(calls, rng, events)
    if data is not None:
        inv["intermediate_data"] = data
    return inv


def conversation_pair(rng: random.Random) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(actual, expected) invocation lists of equal length."""
    turns = rng.choice([1, 1, 2, 3, 5])
    actual, expected = [], []
    for _ in range(turns):
        want = trajectory(rng)
        got = mutate(want, rng) if rng.random() < 0.85 else trajectory(rng)
        expected.append(invocation(rng, want, content(rng, "model"), events=False))
        reference_like = rng.random() < 0.3
        final = expected[-1].get("final_response") if reference_like else content(rng, "model")
        actual.append(invocation(rng, got, final, events=rng.random() < 0.6))
    return actual, expected
