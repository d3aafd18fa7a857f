"""The judge client on its own (llm/client.py): every request goes through the cache, the credentials, the budget
and the retries in that order, and its usage is counted once. The model call is a plain coroutine here, so these
are the client's rules with nothing else around them; the real HTTP path to a fake Gemini is the last test."""

from __future__ import annotations

import asyncio

import pytest

from adk_eval_gate.llm.cache import LlmCache, cache_key
from adk_eval_gate.llm.client import (
    CAUSE_BUDGET,
    CAUSE_NO_CREDENTIALS,
    Ask,
    LlmClient,
    LlmSettings,
    LlmUnavailable,
    UsageStats,
    has_credentials,
)
from tests.support.fake_gemini import FakeGemini


class Model:
    """A model call that answers from a script: an exception to raise, or the answer to return."""

    def __init__(self, *script: object) -> None:
        self.script, self.calls = list(script), 0

    async def __call__(self) -> dict:
        self.calls += 1
        step = self.script.pop(0) if len(self.script) > 1 else self.script[0]
        if isinstance(step, BaseException):
            raise step
        return step


ANSWER = {"text": "ok", "input_tokens": 1_000_000, "output_tokens": 1_000_000}


def client(tmp_path, monkeypatch, **settings) -> LlmClient:
    monkeypatch.setenv("GOOGLE_API_KEY", "fake-judge-key")
    return LlmClient(LlmSettings(backoff=0.0, **settings), LlmCache(tmp_path / "cache"))


def call(llm: LlmClient, model: Model, key: str = "k", name: str = "gemini-2.5-flash", tally=None) -> dict:
    return asyncio.run(llm.cached_call("judge", name, key, model, tally=tally))


def test_an_answer_is_counted_priced_and_cached_so_the_same_request_is_never_made_twice(tmp_path, monkeypatch):
    llm, model, tally = client(tmp_path, monkeypatch), Model(ANSWER), UsageStats()
    assert call(llm, model, tally=tally) == ANSWER
    assert call(llm, model, tally=tally) == ANSWER
    assert model.calls == 1
    stats = llm.stats["judge"]
    assert (stats.calls, stats.cache_hits, stats.input_tokens, stats.output_tokens) == (1, 1, 1_000_000, 1_000_000)
    assert stats.cost_usd == pytest.approx(0.30 + 2.50)  # gemini-2.5-flash's list price per million tokens
    assert (tally.calls, tally.cache_hits) == (1, 1)
    again = client(tmp_path, monkeypatch)  # the next run, on the restored cache folder
    assert call(again, model) == ANSWER and model.calls == 1


def test_a_model_without_a_price_has_an_unknown_cost_not_zero(tmp_path, monkeypatch):
    llm = client(tmp_path, monkeypatch)
    call(llm, Model(ANSWER), name="my-own-model")
    assert llm.stats["judge"].unpriced == {"my-own-model"} and llm.stats["judge"].cost_usd == 0.0


def test_without_credentials_nothing_is_called(tmp_path, monkeypatch):
    for name in ("GOOGLE_API_KEY", "GEMINI_API_KEY", "GOOGLE_GENAI_USE_VERTEXAI"):
        monkeypatch.delenv(name, raising=False)
    llm, model = LlmClient(LlmSettings(), LlmCache(None)), Model(ANSWER)
    with pytest.raises(LlmUnavailable) as raised:
        call(llm, model)
    assert raised.value.cause == CAUSE_NO_CREDENTIALS and model.calls == 0


def test_a_spent_call_budget_refuses_the_next_request_before_making_it(tmp_path, monkeypatch):
    llm, model = client(tmp_path, monkeypatch, max_calls=1), Model(ANSWER)
    call(llm, model, key="first")
    with pytest.raises(LlmUnavailable, match="budget of 1 calls spent") as raised:
        call(llm, model, key="second")
    assert raised.value.cause == CAUSE_BUDGET and model.calls == 1
    assert call(llm, model, key="first") == ANSWER  # a cached answer costs nothing: still served


def test_a_transport_failure_is_retried_and_then_an_error_counted_as_a_failure(tmp_path, monkeypatch):
    llm, flaky = client(tmp_path, monkeypatch, retries=2), Model(ConnectionResetError(), ANSWER)
    assert call(llm, flaky, key="flaky") == ANSWER and flaky.calls == 2
    dead = Model(ConnectionResetError())
    with pytest.raises(LlmUnavailable, match="after 3 attempts: ConnectionResetError") as raised:
        call(llm, dead, key="dead")
    assert raised.value.transient and dead.calls == 3 and llm.stats["judge"].failures == 1


def test_an_endpoint_refusing_twice_fails_every_call_of_the_run_at_once(tmp_path, monkeypatch):
    llm = client(tmp_path, monkeypatch, retries=4)
    blip = Model(ConnectionRefusedError(), ANSWER)  # once is a blip: retried
    assert call(llm, blip, key="blip") == ANSWER and blip.calls == 2
    refused = Model(ConnectionRefusedError())
    with pytest.raises(LlmUnavailable, match="judge endpoint cannot be reached: ConnectionRefusedError"):
        call(llm, refused, key="refused")
    assert refused.calls == 2  # not 5 attempts with backoff, for every judged score of the run
    untried = Model(ANSWER)
    with pytest.raises(LlmUnavailable, match="cannot be reached"):
        call(llm, untried, key="next")
    assert untried.calls == 0


def test_a_closed_port_fails_the_real_client_in_seconds(tmp_path, monkeypatch):
    import socket
    import time

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    llm = LlmClient(LlmSettings(base_url=f"http://127.0.0.1:{port}"), LlmCache(tmp_path / "cache"))  # real backoff
    monkeypatch.setenv("GOOGLE_API_KEY", "fake-judge-key")
    llm.available = True

    async def ask_many() -> list[BaseException | str]:
        asks = [llm.generate(Ask("judge", "gemini-2.5-flash", f"q{i}", None, 0, "v1")) for i in range(20)]
        return await asyncio.gather(*asks, return_exceptions=True)

    started = time.monotonic()
    outcomes = asyncio.run(ask_many())
    assert all(isinstance(o, LlmUnavailable) and "cannot be reached" in str(o) for o in outcomes), outcomes[:2]
    assert time.monotonic() - started < 10  # was 5 attempts, 1 + 2 + 4 + 8 s of backoff, for each call


def test_a_bug_in_the_call_is_not_retried(tmp_path, monkeypatch):
    llm, broken = client(tmp_path, monkeypatch, retries=4), Model(KeyError("candidates"))
    with pytest.raises(KeyError):
        call(llm, broken)
    assert broken.calls == 1


def test_credentials_are_an_api_key_or_a_whole_vertex_setting():
    assert has_credentials({"GOOGLE_API_KEY": "k"}) and has_credentials({"GEMINI_API_KEY": "k"})
    vertex = {"GOOGLE_GENAI_USE_VERTEXAI": "true", "GOOGLE_CLOUD_PROJECT": "p", "GOOGLE_CLOUD_LOCATION": "l"}
    assert has_credentials(vertex)
    assert not has_credentials({**vertex, "GOOGLE_CLOUD_LOCATION": ""})
    assert not has_credentials({})


def test_generate_asks_the_model_over_http_once_per_distinct_prompt(tmp_path, monkeypatch):
    server = FakeGemini(lambda prompt: f"echo: {prompt}")
    llm = client(tmp_path, monkeypatch, base_url=server.url)

    async def ask_three_times() -> list[str]:  # one event loop: the SDK's connection pool belongs to it
        return [
            await llm.generate(Ask("judge", "gemini-2.5-flash", "hello", None, sample, "v1")) for sample in (0, 0, 1)
        ]

    try:
        assert asyncio.run(ask_three_times()) == ["echo: hello"] * 3
    finally:
        server.close()
    assert [r["prompt"] for r in server.requests] == ["hello", "hello"]  # another sample is another request
    assert (llm.stats["judge"].calls, llm.stats["judge"].cache_hits) == (2, 1)


def test_the_cache_key_covers_every_part_and_a_torn_entry_is_a_miss(tmp_path):
    assert cache_key(model="a", prompt="p") == cache_key(prompt="p", model="a")
    assert cache_key(model="a", prompt="p") != cache_key(model="a", prompt="q")
    cache = LlmCache(tmp_path)
    key = cache_key(model="a")
    cache.put(key, {"text": "x"})
    assert cache.get(key) == {"text": "x"}
    (tmp_path / key[:2] / f"{key}.json").write_text('{"text": ')
    assert cache.get(key) is None
    (tmp_path / key[:2] / f"{key}.json").write_text('["an answer is an object"]')
    assert cache.get(key) is None
    assert LlmCache(None).get(key) is None


def test_a_cache_that_cannot_be_written_is_turned_off_with_one_warning(tmp_path, capsys):
    blocker = tmp_path / "cache"
    blocker.write_text("a file where the cache folder should be")
    cache = LlmCache(blocker)
    cache.put(cache_key(n=1), {"text": "x"})
    cache.put(cache_key(n=2), {"text": "y"})
    assert cache.directory is None
    assert capsys.readouterr().err.count("the judge cache is off for this run") == 1
