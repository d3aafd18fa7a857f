"""report.html's packed data (report/html_pack.py): the page gives back exactly the documented data, the head holds
what a case's row shows (each run's outcome, the usage total) and nothing of its runs' turns or texts, and the page
stays small: 1,000 cases of distinct responses fit in a fraction of the plain JSON."""

from __future__ import annotations

import base64
import gzip
import json
import re

import pytest

from adk_eval_gate.report.html import DATA_ID, embed_json, embedded_data, render_page, report_data
from adk_eval_gate.report.html_pack import CHUNK, PACKING, case_head, pack, unpack
from tests.support.report_data import TRAJECTORY, Case, compared, results_file
from tests.unit.report.test_report_browser import EXPECTED, HISTORY, HOSTILE_TEXT, suite


def _data():
    current, baseline = suite()
    return report_data(current, compared(current, baseline), EXPECTED, HISTORY)


def _packed(page: str) -> dict:
    found = re.search(f'<script type="application/json" id="{DATA_ID}">(.*?)</script>', page, re.S)
    return json.loads(found.group(1))


def test_the_page_gives_back_exactly_the_documented_data():
    data = _data()
    assert embedded_data(render_page(data)) == json.loads(json.dumps(data))


def test_the_head_has_each_row_and_no_turn_or_text():
    packed = _packed(render_page(_data()))
    assert set(packed) == {"version", "packing", "chunk", "head", "detail"} and packed["packing"] == PACKING
    head = json.loads(gzip.decompress(base64.b64decode(packed["head"])))
    assert "texts" not in head and len(head["cases"]) == 7 and len(packed["detail"]) == 1
    # The head's own texts are the comparison rows' reasons only.
    assert head["reasons"] and all(len(r) < 400 for r in head["reasons"])
    assert HOSTILE_TEXT not in json.dumps(head, ensure_ascii=False)  # agent responses wait for the detail part
    rows = {c["eval_id"]: c for c in head["cases"]}
    assert set(rows["passing_case"]) == {
        "key",
        "agent",
        "eval_set_id",
        "eval_id",
        "status",
        "reason",
        "tags",
        "flaky",
        "compared",
        "metrics",
        "outcomes",
        "usage",
    }
    assert all("runs" not in m for c in head["cases"] for m in c["metrics"].values())
    assert rows["passing_case"]["outcomes"] == "ppppp" and rows["failed_case"]["outcomes"] == "fffff"
    assert rows["flaky_case"]["outcomes"] == "pfpfp"
    assert rows["errored_case"]["outcomes"] == "eeeee" and rows["errored_case"]["usage"] == [0, None]


def test_usage_total_is_every_run_and_unknown_when_one_run_lacks_it():
    current = results_file({("a", "s"): [Case("c", {TRAJECTORY: [[1.0], [1.0]]})]})
    case = report_data(current)["cases"][0]
    usage = [r.usage for r in current.eval_sets[0].cases[0].runs]
    assert case_head(case)["usage"] == [
        sum(u.input_tokens + u.output_tokens for u in usage),
        usage[0].cost_usd + usage[1].cost_usd,
    ]
    case["runs"][1][3] = None
    assert case_head(case)["usage"] == [usage[0].input_tokens + usage[0].output_tokens, None]


def test_a_page_packed_otherwise_is_refused():
    with pytest.raises(ValueError, match="packed as 'zip'"):
        unpack({"version": 1, "packing": "zip", "chunk": CHUNK, "head": "", "detail": []})


def test_a_secret_is_masked_before_it_is_compressed(monkeypatch):
    secret = "s3cr3t-value-123"
    monkeypatch.setenv("MY_API_KEY", secret)
    current = results_file({("a", "s"): [Case("c", {TRAJECTORY: [[1.0]]}, responses=[f"the key is {secret}"])]})
    packed = pack(report_data(current), embed_json)
    detail = gzip.decompress(base64.b64decode(packed["detail"][0])).decode()
    assert secret not in detail and "the key is ***" in detail


def test_a_thousand_cases_of_distinct_responses_fit_a_fraction_of_the_plain_json():
    words = ["the", "order", "was", "shipped", "to", "your", "address", "and", "should", "arrive", "tomorrow"]
    cases = [
        Case(
            f"case_{i:04d}",
            {TRAJECTORY: [[1.0], [0.0 if i % 7 else 1.0]]},
            responses=[" ".join(words[(i + k) % len(words)] for k in range(30)) + f" #{i}"],
        )
        for i in range(1000)
    ]
    data = report_data(results_file({("a", "s"): cases}))
    page = render_page(data)
    plain = len(embed_json(data))
    assert len(page) < plain / 3, (len(page), plain)
    assert len(_packed(page)["detail"]) == 1000 // CHUNK  # a part per CHUNK cases, each with its own texts
    assert embedded_data(page) == json.loads(json.dumps(data))  # the same text indexes across parts
