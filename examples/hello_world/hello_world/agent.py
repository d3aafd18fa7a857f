"""A dice-rolling, prime-checking agent (after ADK's hello_world sample) on a scripted offline model.

The model is a `BaseLlm` subclass that decides from the conversation alone, so the agent runs through
google-adk's real Runner with no network and no keys. `FAKE_LLM_LATENCY` (seconds) delays every model call
to imitate a hosted model.
"""

from __future__ import annotations

import asyncio
import os
import random
import re
from collections.abc import AsyncGenerator

from google.adk.agents import LlmAgent
from google.adk.models import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.genai import types


def roll_die(sides: int) -> int:
    """Roll a die with the given number of sides and return the result."""
    # Seeded by the number of sides so the recorded answers are reproducible.
    return random.Random(int(sides)).randint(1, int(sides))


def check_prime(nums: list[int]) -> str:
    """Check whether each number in nums is prime."""

    def is_prime(n: int) -> bool:
        return n >= 2 and all(n % d for d in range(2, int(n**0.5) + 1))

    primes = [int(n) for n in nums if is_prime(int(n))]
    return f"{', '.join(map(str, primes))} are prime numbers." if primes else "No prime numbers found."


def _response(part: types.Part) -> LlmResponse:
    return LlmResponse(
        content=types.Content(role="model", parts=[part]),
        usage_metadata=types.GenerateContentResponseUsageMetadata(
            prompt_token_count=10, candidates_token_count=5, total_token_count=15
        ),
    )


class ScriptedLlm(BaseLlm):
    """Calls a tool when the user asks for one, then summarises the tool's result."""

    model: str = "scripted-dice"

    @classmethod
    def supported_models(cls) -> list[str]:
        return [r"scripted-.*"]

    async def generate_content_async(self, llm_request: LlmRequest, stream: bool = False) -> AsyncGenerator[LlmResponse, None]:
        latency = float(os.environ.get("FAKE_LLM_LATENCY", "0") or 0)
        if latency:
            await asyncio.sleep(latency)
        last = llm_request.contents[-1] if llm_request.contents else None
        parts = list(last.parts or []) if last else []
        result = next((p.function_response for p in parts if p.function_response), None)
        if result is not None:
            value = (result.response or {}).get("result")
            if result.name == "roll_die":
                sides = next(
                    (p.function_call.args.get("sides") for c in reversed(llm_request.contents) for p in (c.parts or [])
                     if p.function_call and p.function_call.name == "roll_die"),
                    None,
                )
                yield _response(types.Part(text=f"I rolled a {sides} sided die and got {value}."))
            else:
                yield _response(types.Part(text=str(value)))
            return
        text = " ".join(p.text for p in parts if p.text).lower()
        if match := re.search(r"roll an? (\d+)[ -]sided die", text):
            call = types.FunctionCall(name="roll_die", args={"sides": int(match.group(1))})
            yield _response(types.Part(function_call=call))
            return
        if match := re.search(r"(?:are|is) (\d+) and (\d+) prime", text):
            call = types.FunctionCall(name="check_prime", args={"nums": [int(match.group(1)), int(match.group(2))]})
            yield _response(types.Part(function_call=call))
            return
        yield _response(types.Part(text="I can roll dice and check whether numbers are prime."))


root_agent = LlmAgent(
    name="hello_world",
    model=ScriptedLlm(),
    instruction="You roll dice and check whether numbers are prime.",
    tools=[roll_die, check_prime],
)
