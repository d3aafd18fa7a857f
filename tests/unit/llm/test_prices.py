"""Prices (llm/prices.py): a model is priced by the longest table key it starts with; an unknown one has an
unknown cost, never zero; a workflow's prices override or extend the table."""

from __future__ import annotations

import pytest

from adk_eval_gate.llm.prices import DEFAULT_PRICES, Price, PriceTable


def test_unknown_model_has_unknown_cost_and_prices_match_by_prefix():
    table = PriceTable()
    assert table.price("models/gemini-2.5-flash-001") == table.price("gemini-2.5-flash")
    assert table.price("gemini-2.5-flash-lite-preview").input < table.price("gemini-2.5-flash").input
    assert table.cost("my-own-model", 10, 10) is None


def test_overrides_replace_and_extend_the_list_prices():
    table = PriceTable.with_overrides({"publishers/google/models/gemini-2.5-pro": Price(1.0, 2.0), "mine": Price(3, 4)})
    assert table.price("gemini-2.5-pro") == Price(1.0, 2.0)
    assert table.cost("mine-v2", 1_000_000, 500_000) == pytest.approx(3 + 2)
    assert table.price("gemini-2.5-flash") == DEFAULT_PRICES["gemini-2.5-flash"]
