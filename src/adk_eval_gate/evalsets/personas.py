"""User personas of conversation scenarios: inline objects, or the ids of ADK's pre-built ones.

The pre-built personas' texts are google-adk's; we read them from an installed google-adk rather than keep a copy
that would drift from the version the team evaluates with.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Mapping

import jinja2.sandbox

from adk_eval_gate.evalsets.adk_eval_schema import ConversationScenario, UserPersona


class PersonaUnavailable(ValueError):
    pass


def resolve_persona(scenario: ConversationScenario) -> UserPersona | None:
    persona = scenario.user_persona
    if persona is None or isinstance(persona, UserPersona):
        return persona
    if importlib.util.find_spec("google.adk") is None:
        raise PersonaUnavailable(
            f"the pre-built persona {persona!r} is defined by google-adk; install it with "
            "pip install 'adk-eval-gate[adk]', or write the persona object inline"
        )
    from google.adk.evaluation.simulation.pre_built_personas import get_default_persona_registry

    found = get_default_persona_registry().get_persona(persona)
    return UserPersona.model_validate(found.model_dump())


def fill_persona(persona: UserPersona | None, values: Mapping[str, object]) -> UserPersona | None:
    """A persona whose texts hold placeholders such as `{{ stop_signal }}` (ADK's pre-built ones do), rendered in
    a sandbox with `values`."""
    if persona is None:
        return None
    sandbox = jinja2.sandbox.SandboxedEnvironment()

    def fill(text: str) -> str:
        return sandbox.from_string(text).render(values) if text else ""

    return UserPersona(
        id=persona.id,
        description=fill(persona.description),
        behaviors=[
            b.model_copy(
                update={
                    "name": fill(b.name),
                    "description": fill(b.description),
                    "behavior_instructions": [fill(i) for i in b.behavior_instructions],
                    "violation_rubrics": [fill(r) for r in b.violation_rubrics],
                }
            )
            for b in persona.behaviors
        ],
    )
