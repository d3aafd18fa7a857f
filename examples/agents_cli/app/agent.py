"""A weather-and-capitals agent on a scripted offline model, laid out as an agents-cli project's `app/`.

The model decides from the conversation alone (no network, no keys), so google-adk's real Runner runs it. A
follow-up such as "And in Paris?" reuses the tool of the previous user turn: that is how the dataset's Shape B
case (earlier turns as session history) shows the agent reading its history.
"""

from __future__ import annotations

import re
from collections.abc import AsyncGenerator

from google.adk.agents import LlmAgent
from google.adk.models import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.genai import types

WEATHER = {"san francisco": "foggy, 16 C", "paris": "sunny, 22 C", "tokyo": "rainy, 19 C"}
CAPITALS = {"france": "Paris", "japan": "Tokyo", "italy": "Rome"}


def get_weather(city: str) -> str:
    """Today's weather in a city."""
    return WEATHER.get(city.lower(), "unknown")


def get_capital(country: str) -> str:
    """The capital city of a country."""
    return CAPITALS.get(country.lower(), "unknown")


def _response(part: types.Part) -> LlmResponse:
    return LlmResponse(
        content=types.Content(role="model", parts=[part]),
        usage_metadata=types.GenerateContentResponseUsageMetadata(
            prompt_token_count=12, candidates_token_count=6, total_token_count=18
        ),
    )


def _texts(content: types.Content) -> str:
    return " ".join(p.text for p in content.parts or [] if p.text)


class ScriptedLlm(BaseLlm):
    """Calls a tool when the user asks for one, then answers from the tool's result."""

    model: str = "scripted-travel"

    @classmethod
    def supported_models(cls) -> list[str]:
        return [r"scripted-.*"]

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        contents = list(llm_request.contents or [])
        last = contents[-1] if contents else types.Content(parts=[])
        result = next((p.function_response for p in last.parts or [] if p.function_response), None)
        if result is not None:
            value = (result.response or {}).get("result")
            call = next(p.function_call for c in reversed(contents) for p in c.parts or [] if p.function_call)
            subject = next(iter(call.args.values()))
            if result.name == "get_weather":
                yield _response(types.Part(text=f"The weather in {subject} is {value}."))
            else:
                yield _response(types.Part(text=f"The capital of {subject} is {value}."))
            return
        text = _texts(last).lower()
        earlier = [c for c in contents[:-1] if c.role == "user" and _texts(c)]
        if match := re.search(r"weather (?:like )?in ([a-z ]+?)\??$", text):
            yield _response(
                types.Part(function_call=types.FunctionCall(name="get_weather", args={"city": match.group(1).title()}))
            )
        elif match := re.search(r"capital of ([a-z ]+?)\??$", text):
            yield _response(
                types.Part(
                    function_call=types.FunctionCall(name="get_capital", args={"country": match.group(1).title()})
                )
            )
        elif (match := re.search(r"^and in ([a-z ]+?)\??$", text)) and earlier:
            tool = "get_weather" if "weather" in _texts(earlier[-1]).lower() else "get_capital"
            arg = "city" if tool == "get_weather" else "country"
            yield _response(types.Part(function_call=types.FunctionCall(name=tool, args={arg: match.group(1).title()})))
        else:
            yield _response(types.Part(text="I can tell you the weather in a city or the capital of a country."))


root_agent = LlmAgent(
    name="root_agent",
    model=ScriptedLlm(),
    instruction="You tell people the weather in a city and the capital of a country.",
    tools=[get_weather, get_capital],
)
