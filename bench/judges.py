"""LLM judging throughput: 100 cases × num_samples 5 of final_response_match_v2 (500 calls; `--criteria 3` adds
both rubric criteria, 1,500 calls) against a fake Gemini server on 127.0.0.1 (bench/fake_gemini.py, its own
process) that takes 200 ms per call, through the real google-genai client. One sample at a time (ADK's default
parallelism_limit of 1) beside our pool at concurrency 16, in the same run, then the cached re-run (which must
make no call).

    python bench/judges.py [--cases 100] [--criteria 1] [--samples 5] [--latency 0.2] [--concurrency 16]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import tempfile
import time
from pathlib import Path

from adk_eval_gate.criteria.engine.criterion import ScoringInput
from adk_eval_gate.criteria.engine.judge import Judge
from adk_eval_gate.criteria.engine.options import LlmJudgeOptions, RubricsOptions
from adk_eval_gate.criteria.final_response_match_v2 import score_final_response_match_v2
from adk_eval_gate.criteria.rubrics import score_final_response_quality, score_tool_use_quality
from adk_eval_gate.evalsets.adk_eval_schema import EvalCase, Invocation
from adk_eval_gate.llm.cache import LlmCache
from adk_eval_gate.llm.client import LlmClient, LlmSettings
from fake_gemini import FakeGeminiProcess


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
        expected, actual = (
            [inv(f"question {i}", f"reference answer {i}")],
            [inv(f"question {i}", f"agent answer {i}")],
        )
        out.append(ScoringInput(EvalCase(eval_id=f"c{i}", conversation=expected), actual, expected))
    return out


RUBRICS = [{"rubric_id": "helpful", "rubric_content": {"text_property": "The response answers the question."}}]
REPLY = (
    '{"reasoning": ["ok"], "is_the_agent_response_valid": ["valid"]}\n'
    "ID: helpful\nProperty: The response answers the question.\nEvidence: x\nRationale: ok\nVerdict: yes\n"
)


async def judge_everything(data: list[ScoringInput], criteria: int, samples: int, client: Judge) -> list:
    judge = {"num_samples": samples}
    scorers = [
        (score_final_response_match_v2, LlmJudgeOptions(threshold=0.5, judge_model_options=judge)),
        (
            score_final_response_quality,
            RubricsOptions(threshold=0.5, rubrics=RUBRICS, judge_model_options=judge),
        ),
        (score_tool_use_quality, RubricsOptions(threshold=0.5, rubrics=RUBRICS, judge_model_options=judge)),
    ]
    return await asyncio.gather(*(scorer(d, options, client) for d in data for scorer, options in scorers[:criteria]))


def timed(data, criteria, samples, client) -> tuple[float, list]:
    start = time.perf_counter()
    outcomes = asyncio.run(judge_everything(data, criteria, samples, client))
    return time.perf_counter() - start, outcomes


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--cases", type=int, default=100)
    parser.add_argument("--criteria", type=int, default=1, choices=(1, 2, 3))
    parser.add_argument("--samples", type=int, default=5)
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--concurrency", type=int, default=16)
    args = parser.parse_args()
    server = FakeGeminiProcess(args.latency, REPLY)
    os.environ.update({"GOOGLE_API_KEY": "bench", "GOOGLE_GEMINI_BASE_URL": server.url})
    data = cases(args.cases)
    calls = args.cases * args.criteria * args.samples
    cache_dir = Path(tempfile.mkdtemp(prefix="judge-cache-"))
    try:
        sequential, seq_out = timed(
            data, args.criteria, args.samples, Judge(LlmClient(LlmSettings(concurrency=1), LlmCache(None)))
        )
        pooled_client = Judge(LlmClient(LlmSettings(concurrency=args.concurrency), LlmCache(cache_dir)))
        pooled, pool_out = timed(data, args.criteria, args.samples, pooled_client)
        before = server.count()
        rerun_client = Judge(LlmClient(LlmSettings(concurrency=args.concurrency), LlmCache(cache_dir)))
        cached, cache_out = timed(data, args.criteria, args.samples, rerun_client)
        rerun_calls = server.count() - before
    finally:
        server.close()
        shutil.rmtree(cache_dir, ignore_errors=True)
    same = [o.score for o in seq_out] == [o.score for o in pool_out] == [o.score for o in cache_out]
    print(
        f"{args.cases} cases × {args.criteria} judged criteria × {args.samples} samples = {calls} judge calls, "
        f"{args.latency * 1000:.0f} ms each"
    )
    print(f"  one sample at a time (ADK's default): {sequential:7.2f} s")
    print(
        f"  adk-eval-gate, concurrency {args.concurrency:<3}     : {pooled:7.2f} s  "
        f"({sequential / pooled:.1f}x faster; target >= 10x)"
    )
    print(
        f"  cached re-run                       : {cached:7.2f} s, {rerun_calls} judge calls (target 0), "
        f"{sum(s.cache_hits for s in rerun_client.llm.stats.values())} cache hits"
    )
    print(f"  identical scores on all three runs  : {same}")
    return 0 if same and rerun_calls == 0 and sequential / pooled >= 10 else 1


if __name__ == "__main__":
    raise SystemExit(main())
