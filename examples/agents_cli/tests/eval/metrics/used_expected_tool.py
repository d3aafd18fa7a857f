"""1 when the agent's turn called the tool named by the case's `expected_tool` field (0 otherwise)."""


def evaluate(instance):
    expected = instance.get("expected_tool")
    calls = [
        part["function_call"]["name"]
        for turn in instance.get("agent_data", {}).get("turns", [])
        for event in turn.get("events", [])
        for part in (event.get("content") or {}).get("parts", [])
        if "function_call" in part
    ]
    if expected is None:
        return {"score": float(not calls), "explanation": f"no tool expected; called {calls or 'none'}"}
    return {"score": float(expected in calls), "explanation": f"expected {expected}; called {calls or 'none'}"}
