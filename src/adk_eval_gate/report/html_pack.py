"""How report.html carries its data: two gzip-compressed JSON parts, base64 in the page's JSON element.

A run of 10,000 cases × 5 runs holds about 100,000 distinct agent responses: as plain JSON the page would pass
45 MB, and the browser would parse all of it before drawing anything. So the data is split by when it is needed:

* `head`: everything the first screen shows — the verdict, facts, verdicts, efficiency, eval sets, and per case
  what its table row, the filters, the search and the banner need (`case_head`). Unpacked before the first frame.
* `detail`: per case, in the same order, what only its drill-down shows (every run's scores per turn, usage,
  turns, the expected turns, sampling), and the `texts` every text reference points into. Unpacked after the first
  frame is painted; a case opened before then is built once it has arrived.

Both are gzip (the browser's own DecompressionStream reads it: no script of ours parses binary, nothing is
fetched) of JSON produced by the caller's encoder, which masks secrets first, so what is compressed is already
safe. `unpack` gives back the data in the documented shape (report/html.py), for scripts and tests that read a
page.

    {"version": 1, "packing": "gzip+base64", "head": str, "detail": str}
"""

from __future__ import annotations

import base64
import gzip
import json
from collections.abc import Callable, Mapping
from typing import Any

PACKING = "gzip+base64"
HEAD_CASE_FIELDS = ("key", "agent", "eval_set_id", "eval_id", "status", "reason", "tags", "flaky", "compared")
# Level 6 is zlib's default: level 9 is a few per cent smaller and several times slower on 30 MB of text.
_LEVEL = 6


def run_outcome(case: Mapping[str, Any], i: int) -> str:
    """Run i of a case as one status code (p f e n, as the page's run squares show it): an error of the run or of
    any criterion's scoring in it, else failed if any criterion failed, else passed if any passed."""
    run = case["runs"][i]
    if run[1]:
        return "e"
    codes = [
        m["runs"][i][1] if i < len(m["runs"]) and m["runs"][i] is not None else "e" for m in case["metrics"].values()
    ]
    for code in ("f", "e", "p"):
        if code in codes:
            return code
    return "n"


def usage_total(case: Mapping[str, Any]) -> list[Any]:
    """[tokens in and out over every run with usage, cost over every run | null when any run's cost is unknown]."""
    tokens, cost, known = 0, 0.0, bool(case["runs"])
    for run in case["runs"]:
        usage = run[3]
        if usage is None:
            known = False
            continue
        tokens += usage[0] + usage[1]
        if usage[5] is None:
            known = False
        else:
            cost += usage[5]
    return [tokens, cost if known else None]


def case_head(case: Mapping[str, Any]) -> dict[str, Any]:
    """What a case's row needs: its fields but the per-run ones, each run's outcome ("ppfe") and the usage total."""
    head = {name: case[name] for name in HEAD_CASE_FIELDS}
    head["metrics"] = {n: {k: v for k, v in m.items() if k != "runs"} for n, m in case["metrics"].items()}
    head["outcomes"] = "".join(run_outcome(case, i) for i in range(len(case["runs"])))
    head["usage"] = usage_total(case)
    return head


def case_detail(case: Mapping[str, Any]) -> list[Any]:
    """[{criterion: runs}, expected, runs, sampling]: the rest of the case."""
    return [{n: m["runs"] for n, m in case["metrics"].items()}, case["expected"], case["runs"], case["sampling"]]


def _blob(part: Any, to_json: Callable[[Any], str]) -> str:
    return base64.b64encode(gzip.compress(to_json(part).encode(), compresslevel=_LEVEL, mtime=0)).decode("ascii")


def _unblob(text: str) -> Any:
    return json.loads(gzip.decompress(base64.b64decode(text)).decode())


def pack(data: Mapping[str, Any], to_json: Callable[[Any], str]) -> dict[str, Any]:
    """The page's embedded object; `to_json` serialises a part (it masks secrets)."""
    head = {k: v for k, v in data.items() if k not in ("cases", "texts")}
    head["cases"] = [case_head(c) for c in data["cases"]]
    detail = {"cases": [case_detail(c) for c in data["cases"]], "texts": data["texts"]}
    return {
        "version": data["version"],
        "packing": PACKING,
        "head": _blob(head, to_json),
        "detail": _blob(detail, to_json),
    }


def unpack(packed: Mapping[str, Any]) -> dict[str, Any]:
    """The data in the documented shape from a page's embedded object."""
    if packed.get("packing") != PACKING:
        raise ValueError(f"report.html data packed as {packed.get('packing')!r}, not {PACKING!r}")
    head, detail = _unblob(packed["head"]), _unblob(packed["detail"])
    cases = []
    for row, (runs_by_metric, expected, runs, sampling) in zip(head["cases"], detail["cases"], strict=True):
        case = {name: row[name] for name in HEAD_CASE_FIELDS}
        case["metrics"] = {n: {**m, "runs": runs_by_metric[n]} for n, m in row["metrics"].items()}
        case.update(expected=expected, runs=runs, sampling=sampling)
        cases.append(case)
    return {**head, "cases": cases, "texts": detail["texts"]}
