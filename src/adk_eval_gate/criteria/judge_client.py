"""The judge: google-genai's async client behind one bounded pool for every judge call of a run.

* Credentials follow google-genai's conventions (`GOOGLE_API_KEY` / `GEMINI_API_KEY`, or
  `GOOGLE_GENAI_USE_VERTEXAI` with a project and location; `GOOGLE_GEMINI_BASE_URL` for the endpoint). Without
  any, judge criteria are `not_evaluated` with the reason "no judge credentials" — fork pull requests have no
  secrets, and that must not crash the run.
* Retries on 408/429/5xx and timeouts with exponential back-off and jitter, honouring `Retry-After`.
* A budget (calls) stops judging cleanly: what could not be judged is `not_evaluated` with the reason.
* Every response is cached (see judge_cache.py); calls, cache hits and tokens are counted per criterion.
"""

from __future__ import annotations

import asyncio
import os
import random
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from .judge_cache import JudgeCache, cache_key

RETRYABLE = {408, 429, 500, 502, 503, 504}


class JudgeUnavailable(Exception):
    """No verdict could be obtained; the message becomes the not-evaluated reason."""


@dataclass
class JudgeStats:
    calls: int = 0
    cache_hits: int = 0
    failures: int = 0
    input_tokens: int = 0
    output_tokens: int = 0


@dataclass
class JudgeSettings:
    concurrency: int = 16
    timeout: float = 60.0
    retries: int = 4
    backoff: float = 1.0
    max_calls: int | None = None
    base_url: str | None = None


def has_credentials(env: dict[str, str] | None = None) -> bool:
    env = dict(os.environ if env is None else env)
    if env.get("GOOGLE_API_KEY") or env.get("GEMINI_API_KEY"):
        return True
    vertex = env.get("GOOGLE_GENAI_USE_VERTEXAI", "").lower() in ("1", "true", "yes")
    return vertex and bool(env.get("GOOGLE_CLOUD_PROJECT")) and bool(env.get("GOOGLE_CLOUD_LOCATION"))


@dataclass
class JudgeClient:
    settings: JudgeSettings
    cache: JudgeCache
    stats: dict[str, JudgeStats] = field(default_factory=lambda: defaultdict(JudgeStats))

    def __post_init__(self) -> None:
        self._pool = asyncio.Semaphore(self.settings.concurrency)
        self._calls = 0
        self._client: Any = None
        self.available = has_credentials()

    def _genai(self) -> Any:
        if self._client is None:
            from google import genai
            from google.genai import types

            options = types.HttpOptions(timeout=int(self.settings.timeout * 1000))
            if self.settings.base_url:
                options.base_url = self.settings.base_url
            self._client = genai.Client(http_options=options)
        return self._client

    async def generate(self, criterion: str, model: str, prompt: str, config: dict[str, Any] | None, sample: int,
                       version: str) -> str:
        """The judge's text for one sample (from the cache when it was asked before)."""
        stats = self.stats[criterion]
        key = cache_key(model=model, prompt=prompt, config=config or {}, sample=sample, criterion=criterion, version=version)
        cached = self.cache.get(key)
        if cached is not None:
            stats.cache_hits += 1
            return cached["text"]
        if not self.available:
            raise JudgeUnavailable("no judge credentials (set GOOGLE_API_KEY, or Vertex AI project and location)")
        if self.settings.max_calls is not None and self._calls >= self.settings.max_calls:
            raise JudgeUnavailable(f"judge budget of {self.settings.max_calls} calls spent")
        self._calls += 1
        async with self._pool:
            text, usage = await self._call(model, prompt, config)
        stats.calls += 1
        stats.input_tokens += usage[0]
        stats.output_tokens += usage[1]
        self.cache.put(key, {"text": text, "model": model})
        return text

    async def _call(self, model: str, prompt: str, config: dict[str, Any] | None) -> tuple[str, tuple[int, int]]:
        from google.genai import errors, types

        generation = types.GenerateContentConfig.model_validate(config or {})
        generation.automatic_function_calling = types.AutomaticFunctionCallingConfig(disable=True)
        contents = [types.Content(role="user", parts=[types.Part(text=prompt)])]
        delay = self.settings.backoff
        for attempt in range(self.settings.retries + 1):
            try:
                response = await asyncio.wait_for(
                    self._genai().aio.models.generate_content(model=model, contents=contents, config=generation),
                    self.settings.timeout)
                parts = (response.candidates[0].content.parts or []) if response.candidates and response.candidates[0].content else []
                usage = response.usage_metadata
                tokens = (usage.prompt_token_count or 0, usage.candidates_token_count or 0) if usage else (0, 0)
                return "\n".join(p.text for p in parts if p.text), tokens
            except errors.APIError as exc:
                if exc.code not in RETRYABLE or attempt == self.settings.retries:
                    raise JudgeUnavailable(f"judge call failed: HTTP {exc.code} {exc.status or ''}".strip()) from None
                wait = _retry_after(exc) or delay * (0.5 + random.random())
            except (asyncio.TimeoutError, OSError) as exc:
                if attempt == self.settings.retries:
                    raise JudgeUnavailable(f"judge call failed: {type(exc).__name__} after {attempt + 1} attempts") from None
                wait = delay * (0.5 + random.random())
            await asyncio.sleep(min(wait, 60.0))
            delay *= 2
        raise AssertionError("unreachable")


def _retry_after(exc: Any) -> float | None:
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None) or {}
    value = headers.get("retry-after") if hasattr(headers, "get") else None
    try:
        return float(value) if value is not None else None
    except ValueError:
        return None
