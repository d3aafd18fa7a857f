"""The model version Gemini says served each judge answer is counted per purpose, cached answers included (they
were served so): what a run's provenance records of its judges."""

from __future__ import annotations

import asyncio

from adk_eval_gate.llm.cache import LlmCache
from adk_eval_gate.llm.client import Ask, LlmClient, LlmSettings, UsageStats
from tests.support.fake_gemini import FakeGemini


def test_the_served_version_is_counted_per_purpose_and_a_cached_answer_keeps_its_own(tmp_path, gemini_env):
    server = FakeGemini(lambda prompt: "ok")
    try:
        gemini_env(server)
        server.model_version = "judge-001"
        llm = LlmClient(LlmSettings(retries=0), LlmCache(tmp_path / "cache"))

        async def ask(prompt: str) -> str:
            return await llm.generate(Ask("crit", "gemini-judge", prompt, None, 0, "v1"))

        async def asked() -> list[str]:
            answers = [await ask("first")]
            server.model_version = "judge-002"  # a new version behind the same name
            answers += [await ask("first"), await ask("second")]  # the first from the cache: served by judge-001
            server.model_version = None  # an answer naming no version is not counted as one
            return [*answers, await ask("third")]

        assert asyncio.run(asked()) == ["ok"] * 4
    finally:
        server.close()
    assert len(server.requests) == 3
    assert llm.stats["crit"].served == {"judge-001": 2, "judge-002": 1}
    assert UsageStats.total([llm.stats["crit"], llm.stats["crit"]]).served == {"judge-001": 4, "judge-002": 2}
