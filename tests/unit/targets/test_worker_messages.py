"""What the agent host and its workers send the run is JSON, never a pickle: they run the pull request's code, and
the run holds GitHub's token (targets/host_start.py). A result crosses intact; anything else ends the channel."""

from __future__ import annotations

import json
import pickle

from adk_eval_gate.evalsets.models import Invocation
from adk_eval_gate.llm.client import UsageStats
from adk_eval_gate.targets.base import CaseRun
from adk_eval_gate.targets.host_start import _HEADER, pack_json, unpack_json
from adk_eval_gate.targets.workers import _decode, _encode


class Opens:
    def __reduce__(self):
        return (open, ("/nonexistent/never-created", "w"))


def test_a_result_crosses_as_json_intact():
    invocation = Invocation.model_validate(
        {"invocation_id": "i", "user_content": {"role": "user", "parts": [{"text": "hi"}]}}
    )
    usage = UsageStats(calls=2, input_tokens=5, cost_usd=0.25, unpriced={"some-model"})
    run = CaseRun("set", "case", 2, (invocation,), None, 1.5, usage)
    frame = pack_json(("result", 3, _encode(run)))
    kind, index, data = unpack_json(frame[_HEADER.size :])
    assert (kind, index) == ("result", 3) and _decode(data) == run


def test_a_pickle_or_anything_but_a_json_array_is_not_a_message():
    assert unpack_json(pickle.dumps(("result", Opens()))) is None  # never loaded: nothing runs
    for data in (b"{}", b'"result"', b"[]", b"\xff", json.dumps({"kind": "result"}).encode()):
        assert unpack_json(data) is None, data
