"""Runs one agents-cli code metric on one instance, in a process of its own (started by agents_cli_code.py).

Reads {"source", "name", "instance"} as JSON on stdin and prints one JSON line: {"score", "explanation"} or
{"error"}. Standalone on purpose (no adk_eval_gate import): it is run as a script with `python -I`, in a clean
environment, so the pull request's metric code sees no token and none of our state. The result rules and the
retry of transient failures are agents-cli 1.11's (`eval grade` with the SDK's CustomMetricHandler).
"""

import json
import random
import sys
import time
from collections.abc import Callable
from typing import Any

RETRYABLE_STATUS = {408, 429, 500, 502, 503, 504}
MAX_TRIES = 5
MAX_ELAPSED_SECONDS = 120.0
MAX_WAIT_SECONDS = 8.0


def _status_of(exc: BaseException) -> int | None:
    code = getattr(exc, "code", None) or getattr(exc, "status_code", None)
    code = code or getattr(getattr(exc, "response", None), "status_code", None)
    return code if isinstance(code, int) else None


def _is_transient(exc: BaseException | None) -> bool:
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        if isinstance(exc, (ConnectionError, TimeoutError)) or _status_of(exc) in RETRYABLE_STATUS:
            return True
        exc = exc.__cause__ or exc.__context__
    return False


def _call(function: Callable[[Any], Any], instance: Any) -> Any:  # the metric's own code: any value
    started = time.monotonic()
    for attempt in range(1, MAX_TRIES + 1):
        try:
            return function(instance)
        except Exception as exc:
            spent = time.monotonic() - started
            if not _is_transient(exc) or attempt == MAX_TRIES or spent >= MAX_ELAPSED_SECONDS:
                raise
            time.sleep(random.uniform(0, min(MAX_WAIT_SECONDS, 2.0**attempt)))
    raise AssertionError("unreachable")


def _result(value: Any, function_name: object) -> dict[str, Any]:
    """The SDK's rules: a dict with `score` → that score (+ `explanation`); a bare int/float → the score; an
    EvalCaseMetricResult as it is; anything else is an error."""
    if type(value).__name__ == "EvalCaseMetricResult":
        value = value.model_dump(mode="json")
        if value.get("error_message"):
            return {"error": value["error_message"]}
        return {"score": value.get("score"), "explanation": value.get("explanation")}
    if isinstance(value, dict) and "score" in value:
        return {"score": value["score"], "explanation": value.get("explanation")}
    if isinstance(value, (int, float)):
        return {"score": value, "explanation": None}
    return {"error": f"CustomFunctionError({function_name}): Returned unexpected type {type(value)}"}


def main() -> dict[str, Any]:
    request: dict[str, Any] = json.loads(sys.stdin.read())
    namespace: dict[str, Any] = {}
    try:
        exec(compile(request["source"], f"<custom_metric:{request['name']}>", "exec"), namespace)
    except Exception as exc:
        return {"error": f"Failed to load custom_function for metric '{request['name']}': {exc}"}
    function = namespace.get("evaluate")
    if not callable(function):
        return {"error": f"Custom metric '{request['name']}' must define a callable named 'evaluate(instance)'"}
    try:
        value = _call(function, request["instance"])
    except Exception as exc:
        return {"error": f"CustomFunctionError({getattr(function, '__name__', 'unknown_custom_function')}): {exc}"}
    result = _result(value, function)
    try:
        written: dict[str, Any] = json.loads(json.dumps(result, default=str))
        return written
    except (TypeError, ValueError) as exc:
        return {"error": f"the metric's result cannot be written as JSON: {exc}"}


if __name__ == "__main__":
    out = main()
    sys.stdout.write("\n" + json.dumps(out) + "\n")
