"""A travel-desk agent on a scripted offline model, for the inference benchmark.

Four tools, a long instruction and a model that reports no token usage (as many self-hosted models do, which
makes ADK log a warning on every call). `FAKE_LLM_LATENCY` (seconds) delays every model call.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import re
from collections.abc import AsyncGenerator

from google.adk.agents import LlmAgent
from google.adk.models import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.genai import types


def _number(*key: object, low: int, high: int) -> int:
    digest = hashlib.sha256(repr(key).encode()).digest()
    return low + int.from_bytes(digest[:4], "big") % (high - low + 1)


def search_flights(origin: str, destination: str, date: str) -> dict:
    """Find the cheapest direct flight from origin to destination on date (YYYY-MM-DD)."""
    return {
        "flight": f"TR{_number(origin, destination, date, low=100, high=999)}",
        "price_usd": _number(origin, destination, date, "price", low=80, high=900),
    }


def find_hotels(city: str, nights: int) -> dict:
    """Find the best-rated hotel in city with a room for the given number of nights."""
    return {
        "hotel": f"{city} Grand {_number(city, low=1, high=9)}",
        "total_usd": _number(city, nights, low=60, high=250) * int(nights),
    }


def get_weather(city: str) -> str:
    """Today's forecast for city."""
    sky = ("sunny", "cloudy", "rainy")[_number(city, low=0, high=2)]
    return f"{_number(city, 'temp', low=-5, high=35)} degrees and {sky}"


def convert_currency(amount: float, currency: str) -> float:
    """Convert an amount of US dollars into currency (EUR, GBP or JPY)."""
    rate = {"EUR": 0.92, "GBP": 0.79, "JPY": 151.0}[currency.upper()]
    return round(float(amount) * rate, 2)


INSTRUCTION = """You are a travel desk assistant for a corporate travel team.
Always use the tools to answer: search_flights for flights, find_hotels for hotels, get_weather for forecasts
and convert_currency for prices in another currency. Quote flight numbers and prices exactly as the tools
return them, never invent availability, and keep each answer to one sentence. Policy: economy class only,
hotels up to 250 USD a night, and no bookings are made without the traveller's confirmation."""

_ASKS = [
    (
        re.compile(r"flights? from (\w+) to (\w+) on ([\d-]+)"),
        "search_flights",
        lambda m: {"origin": m[1].title(), "destination": m[2].title(), "date": m[3]},
    ),
    (
        re.compile(r"hotel in (\w+) for (\d+) nights?"),
        "find_hotels",
        lambda m: {"city": m[1].title(), "nights": int(m[2])},
    ),
    (re.compile(r"weather in (\w+)"), "get_weather", lambda m: {"city": m[1].title()}),
    (
        re.compile(r"convert (\d+) usd to (\w+)"),
        "convert_currency",
        lambda m: {"amount": int(m[1]), "currency": m[2].upper()},
    ),
]


def summary(name: str, args: dict, result: object) -> str:
    if name == "search_flights":
        return (
            f"The cheapest direct flight from {args['origin']} to {args['destination']} on {args['date']} is "
            f"{result['flight']} at {result['price_usd']} USD."
        )
    if name == "find_hotels":
        return f"{result['hotel']} has a room for {args['nights']} nights at {result['total_usd']} USD in total."
    if name == "get_weather":
        return f"The forecast for {args['city']} is {result}."
    return f"{args['amount']} USD is {result} {args['currency']}."


class ScriptedTravelLlm(BaseLlm):
    """Calls the tool the user's request names, then answers from its result. Reports no token usage."""

    model: str = "scripted-travel"

    @classmethod
    def supported_models(cls) -> list[str]:
        return [r"scripted-.*"]

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        latency = float(os.environ.get("FAKE_LLM_LATENCY", "0") or 0)
        if latency:
            await asyncio.sleep(latency)
        last = llm_request.contents[-1] if llm_request.contents else None
        parts = list(last.parts or []) if last else []
        done = next((p.function_response for p in parts if p.function_response), None)
        if done is not None:
            call = next(
                p.function_call
                for c in reversed(llm_request.contents)
                for p in (c.parts or [])
                if p.function_call and p.function_call.name == done.name
            )
            response = done.response or {}
            # ADK wraps a tool's return value in {"result": ...} unless it already is a dict.
            text = summary(done.name, dict(call.args), response.get("result", response))
            yield LlmResponse(content=types.Content(role="model", parts=[types.Part(text=text)]))
            return
        asked = " ".join(p.text for p in parts if p.text).lower()
        for pattern, name, arguments in _ASKS:
            if match := pattern.search(asked):
                call = types.FunctionCall(name=name, args=arguments(match))
                yield LlmResponse(content=types.Content(role="model", parts=[types.Part(function_call=call)]))
                return
        yield LlmResponse(
            content=types.Content(
                role="model",
                parts=[types.Part(text="I can help with flights, hotels, weather and currency.")],
            )
        )


root_agent = LlmAgent(
    name="travel_desk",
    model=ScriptedTravelLlm(),
    instruction=INSTRUCTION,
    tools=[search_flights, find_hotels, get_weather, convert_currency],
)
