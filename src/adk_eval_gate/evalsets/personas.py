"""User personas of conversation scenarios: inline objects, or the ids of ADK's pre-built ones.

The pre-built personas' texts are google-adk's; we read them from an installed google-adk rather than keep a copy
that would drift from the version the team evaluates with.
"""

from __future__ import annotations

import importlib.util

from .models import ConversationScenario, UserPersona


class PersonaUnavailable(ValueError):
    pass


def resolve_persona(scenario: ConversationScenario) -> UserPersona | None:
    persona = scenario.user_persona
    if persona is None or isinstance(persona, UserPersona):
        return persona
    if importlib.util.find_spec("google.adk") is None:
        raise PersonaUnavailable(f"the pre-built persona {persona!r} is defined by google-adk; install it with "
                                 "pip install 'adk-eval-gate[adk]', or write the persona object inline")
    from google.adk.evaluation.simulation.pre_built_personas import get_default_persona_registry

    found = get_default_persona_registry().get_persona(persona)
    return UserPersona.model_validate(found.model_dump())
