"""An ADK agent (scripted model, real Runner) whose model fails quoting its API key after as many characters as
the question says (`fail N`): the error line we keep of an agent's exception is cut at 400 characters."""

from __future__ import annotations

import os
from collections.abc import AsyncGenerator

from google.adk.agents import LlmAgent
from google.adk.models import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse


class CuttingLlm(BaseLlm):
    model: str = "scripted-cutting"

    @classmethod
    def supported_models(cls) -> list[str]:
        return [r"scripted-cutting"]

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        prompt = " ".join(p.text for p in llm_request.contents[-1].parts or [] if p.text)
        offset = int(prompt.split()[-1])
        raise RuntimeError("x" * offset + os.environ["GOOGLE_API_KEY"] + " was rejected")
        yield  # an async generator, as ADK expects


root_agent = LlmAgent(name="cutting", model=CuttingLlm(), instruction="Test agent.")
