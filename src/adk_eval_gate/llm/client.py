"""google-genai's async client behind one bounded pool, shared by the judges and the user simulator of a run.

* Credentials follow google-genai's conventions (`GOOGLE_API_KEY` / `GEMINI_API_KEY`, or
  `GOOGLE_GENAI_USE_VERTEXAI` with a project and location; `GOOGLE_GEMINI_BASE_URL` for the endpoint). Without
  any, calls raise `LlmUnavailable("no judge credentials ...")` — fork pull requests have no secrets, and that
  must not crash the run.
* Retries on 408/429/5xx (google-genai's public `errors.APIError`), timeouts and transport failures with
  exponential back-off and jitter, honouring `Retry-After`. The transport package is never imported: google-genai
  has moved from `httpx` to `httpx2` and may move again, so its exceptions are recognised by where they come from.
* A budget (calls and/or tokens) stops calling cleanly: what could not be asked fails with the reason.
* Every `LlmUnavailable` names its cause: no credentials and a spent budget are designed absences; a judge that
  still fails after its retries (or refuses the request) is an error the gate counts.
* Every response is cached (see cache.py); calls, cache hits, tokens and estimated cost are counted per purpose
  (a criterion name, or "user_simulator").
"""

from __future__ import annotations

import asyncio
import os
import random
import re
import socket
from collections import defaultdict
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from adk_eval_gate.core.clip import clip
from adk_eval_gate.llm.cache import LlmCache, cache_key

if TYPE_CHECKING:  # imported when the first call is made: a run without judges never loads the SDK
    from google import genai
    from google.genai import errors
from adk_eval_gate.core.json_types import JsonObject
from adk_eval_gate.llm.prices import PriceTable

# No model call reads or writes a billion tokens: a larger count from the judge's server is read as this one.
MAX_CALL_TOKENS = 10**9
RETRYABLE = {408, 429, 500, 502, 503, 504}
NO_CREDENTIALS = "no judge credentials (set GOOGLE_API_KEY, or GOOGLE_GENAI_USE_VERTEXAI with a project and location)"
# Why no answer came; the same names as criteria.base.Cause, which this low-level package does not import.
CAUSE_NO_CREDENTIALS, CAUSE_BUDGET, CAUSE_UNAVAILABLE = "no_credentials", "budget_spent", "judge_unavailable"

# HTTP stacks google-genai has used or may use; their connection, protocol and timeout errors are worth a retry.
_TRANSPORTS = frozenset({"httpx", "httpx2", "httpcore", "httpcore2", "aiohttp", "h11", "h2", "anyio", "websockets"})
_TRANSPORT_NAME = re.compile(
    r"Transport|Network|Timeout|Connect|Protocol|Disconnect|Pool|Read|Write|ClientOSError|Payload"
)


class LlmUnavailable(Exception):
    """No answer could be obtained. `cause`: no credentials, a spent budget, or the judge itself unavailable.
    `transient`: the service failed (worth trying the whole case again later)."""

    def __init__(self, message: str, *, transient: bool = False, cause: str = CAUSE_UNAVAILABLE) -> None:
        super().__init__(message)
        self.transient = transient
        self.cause = cause


def cannot_connect(exc: BaseException) -> bool:
    """No connection at all: a name that does not resolve, a refused connection, a proxy refusing. Retried for
    minutes it stays so; a dropped or slow connection (worth retrying) is not this."""
    if isinstance(exc, (ConnectionRefusedError, socket.gaierror)):
        return True
    return any(
        cls.__module__.partition(".")[0] in _TRANSPORTS and ("Connect" in cls.__name__ or cls.__name__ == "ProxyError")
        for cls in type(exc).__mro__
    )


def is_transport_failure(exc: BaseException) -> bool:
    """A timeout or a connection/protocol failure of whatever HTTP package google-genai runs on."""
    if isinstance(exc, (asyncio.TimeoutError, TimeoutError, OSError)):
        return True
    return any(
        cls.__module__.partition(".")[0] in _TRANSPORTS and _TRANSPORT_NAME.search(cls.__name__)
        for cls in type(exc).__mro__
    )


@dataclass
class UsageStats:
    calls: int = 0
    cache_hits: int = 0
    failures: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    # Models called without a price in the table: their cost is unknown, and the report says so.
    unpriced: set[str] = field(default_factory=set)
    # Per model version the API said served an answer (cached answers too): what `provenance` records of a judge.
    served: dict[str, int] = field(default_factory=dict)

    @classmethod
    def total(cls, items: Iterable[UsageStats]) -> UsageStats:
        """The one place usage is summed: judges per criterion, simulators per run, a whole run."""
        summed = cls()
        for item in items:
            summed.add(item)
        return summed

    def add(self, other: UsageStats) -> None:
        self.calls += other.calls
        self.cache_hits += other.cache_hits
        self.failures += other.failures
        self.input_tokens += other.input_tokens
        self.output_tokens += other.output_tokens
        self.cost_usd += other.cost_usd
        self.unpriced |= other.unpriced
        for version, answers in other.served.items():
            self.served[version] = self.served.get(version, 0) + answers


@dataclass
class LlmSettings:
    concurrency: int = 16
    timeout: float = 60.0
    retries: int = 4
    backoff: float = 1.0
    max_calls: int | None = None
    max_tokens: int | None = None
    base_url: str | None = None
    prices: PriceTable = field(default_factory=PriceTable)


def has_credentials(env: dict[str, str] | None = None) -> bool:
    env = dict(os.environ if env is None else env)
    if env.get("GOOGLE_API_KEY") or env.get("GEMINI_API_KEY"):
        return True
    vertex = env.get("GOOGLE_GENAI_USE_VERTEXAI", "").lower() in ("1", "true", "yes")
    return vertex and bool(env.get("GOOGLE_CLOUD_PROJECT")) and bool(env.get("GOOGLE_CLOUD_LOCATION"))


@dataclass
class LlmClient:
    settings: LlmSettings
    cache: LlmCache
    stats: dict[str, UsageStats] = field(default_factory=lambda: defaultdict(UsageStats))

    def __post_init__(self) -> None:
        self._pool: asyncio.Semaphore | None = None
        self._calls = 0
        self._tokens = 0
        self._client: genai.Client | None = None
        self.available = has_credentials()
        self._unreachable: str | None = None  # set once the endpoint refused twice in a row: every call fails now

    def _genai(self) -> genai.Client:
        if self._client is None:
            from google import genai
            from google.genai import types

            options = types.HttpOptions(timeout=int(self.settings.timeout * 1000))
            if self.settings.base_url:
                options.base_url = self.settings.base_url
            self._client = genai.Client(http_options=options)
        return self._client

    def _budget_spent(self) -> str | None:
        if self.settings.max_calls is not None and self._calls >= self.settings.max_calls:
            return f"judge budget of {self.settings.max_calls} calls spent"
        if self.settings.max_tokens is not None and self._tokens >= self.settings.max_tokens:
            return f"judge budget of {self.settings.max_tokens} tokens spent"
        return None

    async def generate(self, ask: Ask, *, skip_thoughts: bool = False, tally: UsageStats | None = None) -> str:
        """The model's text for one sample (from the cache when it was asked before). `skip_thoughts` drops
        thought parts (the user simulator does; ADK's judges keep them). `tally` also receives the counts."""
        purpose, model, prompt, config, sample, version = (
            ask.purpose, ask.model, ask.prompt, ask.config, ask.sample, ask.version
        )  # fmt: skip
        key = cache_key(
            model=model,
            prompt=prompt,
            config=config or {},
            sample=sample,
            purpose=purpose,
            version=version,
            skip_thoughts=skip_thoughts,
        )
        answer = await self.cached_call(
            purpose, model, key, lambda: self._generate(model, prompt, config, skip_thoughts), tally=tally
        )
        return str(answer["text"])

    async def cached_call(
        self,
        purpose: str,
        model: str,
        key: str,
        call: Callable[[], Awaitable[JsonObject]],
        *,
        tally: UsageStats | None = None,
        credentials: Callable[[], str | None] | None = None,
    ) -> JsonObject:
        """One model or evaluation-service request through the cache, the budget, the pool and the retries.
        `call` returns a JSON-able answer with `input_tokens` / `output_tokens`; `credentials` says why the
        request cannot be made (default: no google-genai credentials)."""
        tallies = [self.stats[purpose], *([tally] if tally is not None else [])]
        cached = self.cache.get(key)
        if cached is not None:
            for stats in tallies:
                stats.cache_hits += 1
                _served(stats, cached)
            return cached
        missing = credentials() if credentials is not None else (None if self.available else NO_CREDENTIALS)
        if missing:
            raise LlmUnavailable(missing, cause=CAUSE_NO_CREDENTIALS)
        if self._pool is None:  # created on first use, inside the running event loop
            self._pool = asyncio.Semaphore(self.settings.concurrency)
        async with self._pool:
            # Checked once a slot is free, so queued requests see what the finished ones spent; the calls already
            # in flight (at most `concurrency`) can overshoot a token budget by their own tokens.
            if spent := self._budget_spent():
                raise LlmUnavailable(spent, cause=CAUSE_BUDGET)
            self._calls += 1
            try:
                answer = await self._with_retries(call)
            except LlmUnavailable:
                for stats in tallies:
                    stats.failures += 1
                raise
        input_tokens, output_tokens = answer.get("input_tokens", 0), answer.get("output_tokens", 0)
        self._tokens += input_tokens + output_tokens
        cost = self.settings.prices.cost(model, input_tokens, output_tokens)
        for stats in tallies:
            stats.calls += 1
            stats.input_tokens += input_tokens
            stats.output_tokens += output_tokens
            _served(stats, answer)
            if cost is None:
                stats.unpriced.add(model)
            else:
                stats.cost_usd += cost
        self.cache.put(key, answer)
        return answer

    async def _generate(self, model: str, prompt: str, config: JsonObject | None, skip_thoughts: bool) -> JsonObject:
        from google.genai import types

        generation = types.GenerateContentConfig.model_validate(config or {})
        generation.automatic_function_calling = types.AutomaticFunctionCallingConfig(disable=True)
        contents = [types.Content(role="user", parts=[types.Part(text=prompt)])]
        response = await self._genai().aio.models.generate_content(model=model, contents=contents, config=generation)
        candidate = response.candidates[0] if response.candidates else None
        parts = (candidate.content.parts or []) if candidate and candidate.content else []
        usage = response.usage_metadata
        return {
            "text": "\n".join(p.text for p in parts if p.text and not (skip_thoughts and p.thought)),
            "model": model,
            # what the API says served it (a name can move to a new version): recorded as the run's provenance
            "model_version": response.model_version,
            # the judge's server reports these (a pull request may name it): capped to a count no call reaches
            "input_tokens": _tokens((usage.prompt_token_count or 0) if usage else 0),
            "output_tokens": _tokens(
                ((usage.candidates_token_count or 0) + (usage.thoughts_token_count or 0)) if usage else 0
            ),
        }

    async def _with_retries(self, call: Callable[[], Awaitable[JsonObject]]) -> JsonObject:
        """Anything that is neither an API error nor a transport failure is a bug (ours or the SDK's): it is not
        retried, and propagates for the caller to report as an error."""
        from google.genai import errors

        delay = self.settings.backoff
        attempts = self.settings.retries + 1
        refused = 0  # attempts in a row that could not connect at all
        for attempt in range(1, attempts + 1):
            if self._unreachable is not None:  # seconds, not the minutes every call's retries would take
                raise LlmUnavailable(self._unreachable)
            try:
                return await asyncio.wait_for(call(), self.settings.timeout)
            except errors.APIError as exc:
                retryable = exc.code in RETRYABLE
                if not retryable or attempt == attempts:
                    status = f"HTTP {exc.code} {exc.status or ''}".strip()
                    message = (
                        f"judge unavailable after {attempt} attempt{'s' if attempt > 1 else ''}: {status}"
                        if retryable
                        else f"judge refused the request: {status}"
                    )
                    raise LlmUnavailable(message, transient=retryable) from None
                wait = _retry_after(exc) or delay * (0.5 + random.random())
            except Exception as exc:
                if not is_transport_failure(exc):
                    raise
                refused = refused + 1 if cannot_connect(exc) else 0
                if refused >= 2:  # twice, a second apart: not a blip, and the same for every call of the run
                    self._unreachable = f"judge endpoint cannot be reached: {type(exc).__name__}"
                    raise LlmUnavailable(self._unreachable) from None
                if attempt == attempts:
                    raise LlmUnavailable(
                        f"judge unavailable after {attempt} attempt{'s' if attempt > 1 else ''}: {type(exc).__name__}",
                        transient=True,
                    ) from None
                wait = delay * (0.5 + random.random())
            await asyncio.sleep(min(wait, 60.0))
            delay *= 2
        raise AssertionError("unreachable")


@dataclass(frozen=True)
class Ask:
    """One question to a model: who asks (the criterion or the user simulator), the model, the prompt and its
    config, which sample this is and the asker's version (all part of the cache key)."""

    purpose: str
    model: str
    prompt: str
    config: JsonObject | None
    sample: int
    version: str


def _served(stats: UsageStats, answer: JsonObject) -> None:
    version = answer.get("model_version")
    if isinstance(version, str) and version:
        version = clip(version, 200)  # the judge's server names it: a name, not a payload
        stats.served[version] = stats.served.get(version, 0) + 1


def _tokens(count: int) -> int:
    return max(0, min(MAX_CALL_TOKENS, count))


def _retry_after(exc: errors.APIError) -> float | None:
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None) or {}
    value = headers.get("retry-after") if hasattr(headers, "get") else None
    try:
        return float(value) if value is not None else None
    except ValueError:
        return None
