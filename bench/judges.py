"""LLM judging throughput: 100 cases × 3 judged criteria (final_response_match_v2 and both rubric criteria) ×
num_samples 5 against a fake Gemini server on 127.0.0.1 that takes 200 ms per call. One sample at a time (ADK's
default parallelism_limit of 1) beside our pool at concurrency 16, in the same run, then the cached re-run (which
must make no call).

    python bench/judges.py [--cases 100] [--samples 5] [--latency 0.2] [--concurrency 16]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.fake_gemini import FakeGemini, GeminiFault  # noqa: E402

from adk_eval_gate.criteria.engine.base import ScoringInput  # noqa: E402
from adk_eval_gate.criteria.engine.judge import Judge  # noqa: E402
from adk_eval_gate.criteria.engine.options import LlmJudgeOptions, RubricsOptions  # noqa: E402
from adk_eval_gate.criteria.final_response_match_v2 import score_final_response_match_v2  # noqa: E402
from adk_eval_gate.criteria.rubrics import score_final_response_quality, score_tool_use_quality  # noqa: E402
from adk_eval_gate.evalsets.models import EvalCase, Invocation  # noqa: E402
from adk_eval_gate.llm.cache import LlmCache  # noqa: E402
from adk_eval_gate.llm.client import LlmClient, LlmSettings  # noqa: E402


def cases(n: int) -> list[ScoringInput]:
    out = []

    def inv(question: str, text: str) -> Invocation:
        return Invocation.model_validate(
            {
                "user_content": {"role": "user", "parts": [{"text": question}]},
                "final_response": {"role": "model", "parts": [{"text": text}]},
            }
        )

    for i in range(n):
        expected, actual = [inv(f"question {i}", f"reference answer {i}")], [inv(f"question {i}", f"agent answer {i}")]
        out.append(ScoringInput(EvalCase(eval_id=f"c{i}", conversation=expected), actual, expected))
    return out


RUBRICS = [{"rubric_id": "helpful", "rubric_content": {"text_property": "The response answers the question."}}]
REPLY = (
    '{"reasoning": ["ok"], "is_the_agent_response_valid": ["valid"]}\n'
    "ID: helpful\nProperty: The response answers the question.\nEvidence: x\nRationale: ok\nVerdict: yes\n"
)


async def judge_everything(data: list[ScoringInput], samples: int, client: Judge) -> list:
    judge = {"num_samples": samples}
    scorers = [
        (score_final_response_match_v2, LlmJudgeOptions(threshold=0.5, judge_model_options=judge)),
        (score_final_response_quality, RubricsOptions(threshold=0.5, rubrics=RUBRICS, judge_model_options=judge)),
        (score_tool_use_quality, RubricsOptions(threshold=0.5, rubrics=RUBRICS, judge_model_options=judge)),
    ]
    return await asyncio.gather(*(scorer(d, options, client) for d in data for scorer, options in scorers))


def timed(data, samples, client) -> tuple[float, list]:
    start = time.perf_counter()
    outcomes = asyncio.run(judge_everything(data, samples, client))
    return time.perf_counter() - start, outcomes


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--cases", type=int, default=100)
    parser.add_argument("--samples", type=int, default=5)
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--concurrency", type=int, default=16)
    args = parser.parse_args()
    server = FakeGemini(lambda prompt: REPLY)
    server.faults.append(GeminiFault("", delay=args.latency, times=10**9))  # every call takes `latency`
    os.environ.update({"GOOGLE_API_KEY": "bench", "GOOGLE_GEMINI_BASE_URL": server.url})
    data = cases(args.cases)
    calls = args.cases * 3 * args.samples
    try:
        sequential, seq_out = timed(data, args.samples, Judge(LlmClient(LlmSettings(concurrency=1), LlmCache(None))))
        cache_dir = Path(tempfile.mkdtemp(prefix="judge-cache-"))
        pooled_client = Judge(LlmClient(LlmSettings(concurrency=args.concurrency), LlmCache(cache_dir)))
        pooled, pool_out = timed(data, args.samples, pooled_client)
        before = len(server.requests)
        rerun_client = Judge(LlmClient(LlmSettings(concurrency=args.concurrency), LlmCache(cache_dir)))
        cached, cache_out = timed(data, args.samples, rerun_client)
        rerun_calls = len(server.requests) - before
    finally:
        server.close()
    same = [o.score for o in seq_out] == [o.score for o in pool_out] == [o.score for o in cache_out]
    print(
        f"{args.cases} cases × 3 judged criteria × {args.samples} samples = {calls} judge calls, "
        f"{args.latency * 1000:.0f} ms each"
    )
    print(f"  one sample at a time (ADK's default): {sequential:7.2f} s")
    print(
        f"  adk-eval-gate, concurrency {args.concurrency:<3}     : {pooled:7.2f} s  ({sequential / pooled:.1f}x "
        "faster; target >= 10x)"
    )
    print(
        f"  cached re-run                       : {cached:7.2f} s, {rerun_calls} judge calls (target 0), "
        f"{sum(s.cache_hits for s in rerun_client.llm.stats.values())} cache hits"
    )
    print(f"  identical scores on all three runs  : {same}")
    return 0 if same and rerun_calls == 0 and sequential / pooled >= 10 else 1


if __name__ == "__main__":
    raise SystemExit(main())
