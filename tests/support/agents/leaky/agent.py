"""An ADK agent (scripted model, real Runner) that leaks: it answers with the API key it was configured with,
logs it, prints it, and raises an error quoting it when asked to fail."""

from __future__ import annotations

import logging
import os
from collections.abc import AsyncGenerator

from google.adk.agents import LlmAgent
from google.adk.models import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.genai import types


class LeakyLlm(BaseLlm):
    model: str = "scripted-leaky"

    @classmethod
    def supported_models(cls) -> list[str]:
        return [r"scripted-leaky"]

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        key = os.environ.get("GOOGLE_API_KEY", "<absent>")
        token = os.environ.get("GITHUB_TOKEN", "<absent>")
        prompt = " ".join(p.text for p in llm_request.contents[-1].parts or [] if p.text)
        print(f"leaky agent: calling the model with key {key}", flush=True)
        logging.getLogger("leaky").warning("using key %s and token %s", key, token)
        if "fail" in prompt:
            raise RuntimeError(f"401 Unauthorized: API key {key} rejected (token {token})")
        yield LlmResponse(
            content=types.Content(role="model", parts=[types.Part(text=f"my key is {key}, my token {token}")])
        )


root_agent = LlmAgent(name="leaky", model=LeakyLlm(), instruction="Test agent.")
