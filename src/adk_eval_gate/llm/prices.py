"""Estimated cost of model calls from a price table (US dollars per million tokens).

The built-in table holds Google's list prices for the Gemini API's standard tier (prompts up to 200k tokens); a
workflow's `judge.prices` overrides or extends it, e.g. for Vertex AI contracts or models released later. A model
is priced by the longest table key it starts with, so `gemini-2.5-flash-001` uses `gemini-2.5-flash` and
`gemini-2.5-flash-lite` keeps its own price. A model the table does not know has an unknown cost, never zero.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

PRICES_AS_OF = "2025-11"


@dataclass(frozen=True)
class Price:
    input: float  # USD per million input (prompt) tokens
    output: float  # USD per million output tokens, thinking included


DEFAULT_PRICES: dict[str, Price] = {
    "gemini-3-pro": Price(2.00, 12.00),
    "gemini-2.5-pro": Price(1.25, 10.00),
    "gemini-2.5-flash": Price(0.30, 2.50),
    "gemini-2.5-flash-lite": Price(0.10, 0.40),
    "gemini-2.0-flash": Price(0.10, 0.40),
    "gemini-2.0-flash-lite": Price(0.075, 0.30),
}


def _bare(model: str) -> str:
    return model.rsplit("/", 1)[-1].lower()  # "models/x", "publishers/google/models/x" → "x"


@dataclass(frozen=True)
class PriceTable:
    prices: Mapping[str, Price] = field(default_factory=lambda: dict(DEFAULT_PRICES))

    @classmethod
    def with_overrides(cls, overrides: Mapping[str, Price]) -> PriceTable:
        return cls({**DEFAULT_PRICES, **{_bare(k): v for k, v in overrides.items()}})

    def price(self, model: str) -> Price | None:
        name = _bare(model)
        matches = [key for key in self.prices if name.startswith(key)]
        return self.prices[max(matches, key=len)] if matches else None

    def cost(self, model: str, input_tokens: int, output_tokens: int) -> float | None:
        price = self.price(model)
        if price is None:
            return None
        return (input_tokens * price.input + output_tokens * price.output) / 1_000_000
