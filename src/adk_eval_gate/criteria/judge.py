"""What a judged criterion is handed: the run's shared model client and the prompt templates in force."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import jinja2

from ..llm.client import LlmClient
from .prompts import TEMPLATES


@dataclass
class Judge:
    llm: LlmClient
    templates: jinja2.Environment = field(default=TEMPLATES)

    @property
    def available(self) -> bool:
        return self.llm.available

    async def generate(self, criterion: str, model: str, prompt: str, config: dict[str, Any] | None, sample: int,
                       version: str) -> str:
        return await self.llm.generate(criterion, model, prompt, config, sample, version)

    def render(self, template: str, **values: Any) -> str:
        return self.templates.get_template(template).render(**values)
