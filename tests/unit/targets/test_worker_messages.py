"""What the agent host and its workers send the run is JSON, never a pickle: they run the pull request's code, and
the run holds GitHub's token (targets/host_messages.py). Every message crosses intact as its own type; anything
else decodes to `Malformed`, never to a guess."""

from __future__ import annotations

import json
import pickle

import pytest

from adk_eval_gate.evalsets.adk_eval_schema import Invocation
from adk_eval_gate.llm.client import UsageStats
from adk_eval_gate.targets.case_run import CaseRun
from adk_eval_gate.targets.host_messages import (
    HEADER,
    Exited,
    Fatal,
    Forked,
    Hello,
    Log,
    LogCounts,
    Malformed,
    Ready,
    Result,
    Started,
    pack_json,
    unpack_json,
)


class Opens:
    def __reduce__(self):
        return (open, ("/nonexistent/never-created", "w"))


def _through(message):
    frame = pack_json(message)
    (size,) = HEADER.unpack(frame[: HEADER.size])
    assert size == len(frame) - HEADER.size
    return unpack_json(frame[HEADER.size :])


def test_a_result_crosses_as_json_intact():
    invocation = Invocation.model_validate(
        {"invocation_id": "i", "user_content": {"role": "user", "parts": [{"text": "hi"}]}}
    )
    usage = UsageStats(calls=2, input_tokens=5, cost_usd=0.25, unpriced={"some-model"})
    run = CaseRun("set", "case", 2, (invocation,), None, 1.5, usage)
    assert _through(Result(3, run)) == Result(3, run)


@pytest.mark.parametrize(
    "message",
    [
        Ready(None),
        Ready("agent.py: broken on import"),
        Forked((11, 12)),
        Exited(11, -9),
        Hello(11, "worker"),
        Hello(12, "historian"),
        Started(4),
        Log("a line"),
        LogCounts({"a line": 3}),
        Fatal("RuntimeError: no model"),
        Result(0, CaseRun("s", "c", 0, None, "timed out after 2s", 2.0)),
    ],
)
def test_every_reply_decodes_to_its_own_type(message):
    assert _through(message) == message and type(_through(message)) is type(message)


def test_a_pickle_or_anything_but_a_known_message_is_malformed():
    assert isinstance(unpack_json(pickle.dumps(("result", Opens()))), Malformed)  # never loaded: nothing runs
    for data in (
        b"{}",
        b'"result"',
        b"[]",
        b"\xff",
        b'["result", 3, {}]',  # the old positional tuples are not messages any more
        json.dumps({"type": "shell", "command": "id"}).encode(),
        json.dumps({"type": "started", "index": "3"}).encode(),
        json.dumps({"type": "started", "index": True}).encode(),
        json.dumps({"type": "started", "index": 3, "extra": 1}).encode(),
        json.dumps({"type": "hello", "pid": 1, "role": "root"}).encode(),
        json.dumps({"type": "result", "index": 1, "run": {"eval_id": "c"}}).encode(),
        json.dumps({"type": "log_counts", "counts": {"a": "many"}}).encode(),
    ):
        assert isinstance(unpack_json(data), Malformed), data


def test_a_malformed_message_says_what_it_was_in_one_short_line():
    got = unpack_json(json.dumps({"type": "x" * 1000}).encode())
    assert isinstance(got, Malformed) and len(got.reason) < 100 and "unknown message type" in got.reason


@pytest.mark.parametrize(
    ("message", "wire"),
    [
        (Ready(None), '{"type": "ready", "error": null}'),
        (Forked((11, 12)), '{"type": "forked", "pids": [11, 12]}'),
        (Exited(11, -9), '{"type": "exited", "pid": 11, "code": -9}'),
        (Hello(12, "historian"), '{"type": "hello", "pid": 12, "role": "historian"}'),
        (Started(4), '{"type": "started", "index": 4}'),
        (Log("a line"), '{"type": "log", "text": "a line"}'),
        (LogCounts({"a line": 3}), '{"type": "log_counts", "counts": {"a line": 3}}'),
        (Fatal("no model"), '{"type": "fatal", "reason": "no model"}'),
        (
            Result(0, CaseRun("s", "c", 0, None, "timed out", 2.0)),
            '{"type": "result", "index": 0, "run": {"eval_set_id": "s", "eval_id": "c", "run": 0, '
            '"error": "timed out", "duration": 2.0, "simulator_usage": null, "invocations": null}}',
        ),
    ],
)
def test_the_wire_format_is_type_first_then_the_fields(message, wire):
    """The run and an agent host of another version of this package (a cached image) must still understand
    each other: `type` leads, the fields follow in their order, nothing else is written."""
    assert pack_json(message)[HEADER.size :].decode() == wire


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        (b"\xff", "not JSON"),
        (b"[]", "not a message object"),
        (b'{"type": 5}', "not a message object"),
        (b'{"type": "shell"}', "an unknown message type 'shell'"),
        (b'{"type": "started", "index": 3, "extra": 1}', "unknown fields in a 'started' message"),
        (b'{"type": "started", "index": "3"}', "a 'started' message that does not fit its shape (TypeError)"),
        (b'{"type": "ready"}', "a 'ready' message that does not fit its shape (KeyError)"),
        (b'{"type": "hello", "pid": 1, "role": "root"}', "a 'hello' message that does not fit its shape (ValueError)"),
    ],
)
def test_a_malformed_message_says_why_as_the_log_shows_it(data, reason):
    assert unpack_json(data) == Malformed(reason)
