"""Scoring 10,000 invocations with tool_trajectory_avg_score and response_match_score: ours vs ADK 2.13's evaluators.

Both sides score the same parsed invocations, case by case (2 invocations a case), building their evaluators the
way their pipelines do. Our tokenizer caches are cleared before every repetition, so no run reuses another's work.
The scores of both sides are compared; the benchmark fails if any differs by more than 1e-9.

    python bench/scoring.py [--invocations 10000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import gc
import json
import random
import time

from google.adk.evaluation.eval_case import Invocation as AdkInvocation
from google.adk.evaluation.eval_metrics import EvalMetric, ToolTrajectoryCriterion
from google.adk.evaluation.final_response_match_v1 import RougeEvaluator
from google.adk.evaluation.trajectory_evaluator import TrajectoryEvaluator

from adk_eval_gate.criteria.engine import rouge_tokenizer
from adk_eval_gate.criteria.engine.scoring import score_case
from adk_eval_gate.criteria.registry import resolve_criteria
from adk_eval_gate.evalsets.adk_eval_schema import EvalCase, Invocation
from adk_eval_gate.targets.case_run import CaseRun

VOCAB = [
    "the",
    "a",
    "I",
    "you",
    "we",
    "agent",
    "rolled",
    "rolling",
    "rolls",
    "die",
    "dice",
    "sided",
    "number",
    "numbers",
    "prime",
    "primes",
    "is",
    "are",
    "was",
    "were",
    "found",
    "result",
    "results",
    "weather",
    "city",
    "Paris",
    "London",
    "sunny",
    "rain",
    "temperature",
    "degrees",
    "order",
    "shipped",
    "delivered",
    "customer",
    "account",
    "balance",
    "transfer",
    "booking",
    "flight",
    "hotel",
    "tomorrow",
    "today",
    "please",
    "thanks",
    "sure",
    "here",
    "there",
    "your",
    "my",
    "running",
    "generalization",
    "connection",
    "connected",
    "searching",
    "searched",
    "searches",
    "café",
    "naïve",
    "straße",
    "東京",
    "天気",
    "สวัสดี",
]
TOOLS = ["roll_die", "check_prime", "get_weather", "search", "book_flight"]


def sentence(rng: random.Random) -> str:
    words = [rng.choice(VOCAB) for _ in range(rng.randint(8, 40))]
    return " ".join(words).capitalize() + rng.choice([".", "!", "?"])


def calls(rng: random.Random) -> list[dict]:
    return [
        {"name": rng.choice(TOOLS), "args": {"x": rng.randint(0, 5), "q": rng.choice(VOCAB)}}
        for _ in range(rng.randint(0, 4))
    ]


def invocation_pair(rng: random.Random) -> tuple[dict, dict]:
    expected_calls = calls(rng)
    actual_calls = expected_calls if rng.random() < 0.6 else calls(rng)
    reference = sentence(rng)
    response = reference if rng.random() < 0.2 else sentence(rng)
    user = {"role": "user", "parts": [{"text": sentence(rng)}]}
    expected = {
        "user_content": user,
        "final_response": {"role": "model", "parts": [{"text": reference}]},
        "intermediate_data": {"tool_uses": expected_calls},
    }
    events = [{"author": "agent", "content": {"role": "model", "parts": [{"function_call": c}]}} for c in actual_calls]
    actual = {
        "user_content": user,
        "final_response": {"role": "model", "parts": [{"text": response}]},
        "intermediate_data": {"invocation_events": events},
    }
    return actual, expected


def build(n: int, per_case: int):
    rng = random.Random(2026)
    pairs = [invocation_pair(rng) for _ in range(n)]
    cases = [pairs[i : i + per_case] for i in range(0, n, per_case)]
    ours = [([Invocation.model_validate(a) for a, _ in c], [Invocation.model_validate(e) for _, e in c]) for c in cases]
    adk = [
        (
            [AdkInvocation.model_validate_json(json.dumps(a)) for a, _ in c],
            [AdkInvocation.model_validate_json(json.dumps(e)) for _, e in c],
        )
        for c in cases
    ]
    return ours, adk


def run_ours(cases) -> list[tuple[float, float]]:
    rouge_tokenizer.tokenize_text.cache_clear()
    rouge_tokenizer._ascii_word_tokens.cache_clear()
    criteria = resolve_criteria(
        {
            "tool_trajectory_avg_score": {"threshold": 1.0, "match_type": "IN_ORDER"},
            "response_match_score": 0.8,
        },
        None,
    )
    scores = []
    for i, (actual, expected) in enumerate(cases):
        case = EvalCase(eval_id=f"c{i}", conversation=expected)
        scored = score_case(case, [CaseRun("s", case.eval_id, 0, tuple(actual))], criteria)
        scores.append((scored.criteria[0].score, scored.criteria[1].score))
    return scores


def run_adk(cases) -> list[tuple[float, float]]:
    scores = []
    for actual, expected in cases:
        # LocalEvalService builds an evaluator per metric per case through its registry; so do we here.
        criterion = ToolTrajectoryCriterion(threshold=1.0, match_type="IN_ORDER")
        trajectory = TrajectoryEvaluator(
            eval_metric=EvalMetric(metric_name="tool_trajectory_avg_score", threshold=1.0, criterion=criterion)
        )
        rouge = RougeEvaluator(EvalMetric(metric_name="response_match_score", threshold=0.8))
        scores.append(
            (
                trajectory.evaluate_invocations(actual, expected).overall_score,
                rouge.evaluate_invocations(actual, expected).overall_score,
            )
        )
    return scores


def timed(fn, cases) -> tuple[float, list]:
    gc.collect()
    start = time.perf_counter()
    result = fn(cases)
    return time.perf_counter() - start, result


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--invocations", type=int, default=10_000)
    parser.add_argument("--per-case", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    ours_cases, adk_cases = build(args.invocations, args.per_case)
    ours_times, adk_times = [], []
    for _ in range(args.repeat):  # interleaved, so machine noise hits both sides alike
        t, ours_scores = timed(run_ours, ours_cases)
        ours_times.append(t)
        t, adk_scores = timed(run_adk, adk_cases)
        adk_times.append(t)
    worst = max(abs(a - b) for x, y in zip(ours_scores, adk_scores, strict=True) for a, b in zip(x, y, strict=True))
    ours_best, adk_best = min(ours_times), min(adk_times)
    print(
        f"scoring {args.invocations} invocations ({len(ours_cases)} cases) "
        "with tool_trajectory_avg_score + response_match_score"
    )
    print(f"  adk-eval-gate : best {ours_best:.3f}s  runs {', '.join(f'{t:.3f}' for t in ours_times)}")
    print(f"  google-adk    : best {adk_best:.3f}s  runs {', '.join(f'{t:.3f}' for t in adk_times)}")
    print(f"  speed-up      : {adk_best / ours_best:.2f}x  (target >= 2x)")
    print(f"  max |ours - adk| over {2 * len(ours_cases)} case scores: {worst:.3g}")
    if worst > 1e-9:
        print("  FAIL: scores differ from ADK's")
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
