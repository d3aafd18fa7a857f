"""A test agent whose scripted model calls its tool only some of the time, as a flaky LLM agent does.

`NOISY_RATES` (JSON: lookup key → probability of calling the tool) sets each case's true pass rate; the draws are
seeded (`NOISY_SEED`) and counted per seed and key, so a run of the suite in one process is reproducible.
`NOISY_PADDING` adds that many prompt tokens to every model call, `NOISY_LATENCY` seconds to each: efficiency
regressions. `NOISY_MODEL_VERSION` is the model version its responses report (a new model behind the same name).
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import re
from collections.abc import AsyncGenerator

from google.adk.agents import LlmAgent
from google.adk.models import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.genai import types

DRAWS: dict[str, int] = {}


def lookup(key: str) -> str:
    """Looks the key up."""
    return f"value of {key}"


def _response(part: types.Part) -> LlmResponse:
    padding = int(os.environ.get("NOISY_PADDING", "0") or 0)
    return LlmResponse(
        content=types.Content(role="model", parts=[part]),
        model_version=os.environ.get("NOISY_MODEL_VERSION", "scripted-noisy"),
        usage_metadata=types.GenerateContentResponseUsageMetadata(
            prompt_token_count=100 + padding, candidates_token_count=10, total_token_count=110 + padding
        ),
    )


class NoisyLlm(BaseLlm):
    model: str = "scripted-noisy"

    @classmethod
    def supported_models(cls) -> list[str]:
        return [r"scripted-noisy"]

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        await asyncio.sleep(float(os.environ.get("NOISY_LATENCY", "0") or 0))
        parts = list(llm_request.contents[-1].parts or []) if llm_request.contents else []
        result = next((p.function_response for p in parts if p.function_response), None)
        if result is not None:
            yield _response(types.Part(text=str((result.response or {}).get("result"))))
            return
        text = " ".join(p.text for p in parts if p.text).lower()
        match = re.search(r"look up (\w+)", text)
        if match is None:
            yield _response(types.Part(text="I only look things up."))
            return
        key = match.group(1)
        rate = json.loads(os.environ.get("NOISY_RATES", "{}")).get(key, 1.0)
        draw = f"{os.environ.get('NOISY_SEED', '0')}-{key}"
        DRAWS[draw] = DRAWS.get(draw, 0) + 1
        if random.Random(f"{draw}-{DRAWS[draw]}").random() < rate:
            yield _response(types.Part(function_call=types.FunctionCall(name="lookup", args={"key": key})))
            return
        yield _response(types.Part(text=f"I could not look up {key}."))


root_agent = LlmAgent(name="noisy", model=NoisyLlm(), instruction="Look things up.", tools=[lookup])
