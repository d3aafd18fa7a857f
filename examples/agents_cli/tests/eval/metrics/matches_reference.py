"""Share of the reference answer's words that the agent's final response contains."""


def _words(content):
    text = " ".join(part.get("text", "") for part in (content or {}).get("parts", []))
    return {word.strip(".,!?").lower() for word in text.split() if word.strip(".,!?")}


def evaluate(instance):
    reference = (instance.get("reference") or {}).get("response")
    if not reference:
        return {"score": 1.0, "explanation": "no reference answer"}
    expected, got = _words(reference), _words(instance["response"])
    missing = sorted(expected - got)
    score = 1 - len(missing) / len(expected)
    return {"score": score, "explanation": f"missing: {', '.join(missing)}" if missing else "all words present"}
