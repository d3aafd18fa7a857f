"""A command-protocol agent for the trust tests: `good` calls the tool the cases expect, `broken` drops it,
`leaky` echoes the credentials it can see in its answers, its `{"error"}` replies and its dying words."""

from __future__ import annotations

import json
import os
import sys

mode = sys.argv[1]
request = json.load(sys.stdin)
question = request["turns"][0]["user_content"]["parts"][0]["text"]
seen = {name: os.environ.get(name, "<absent>") for name in ("GOOGLE_API_KEY", "GITHUB_TOKEN", "ACTIONS_RUNTIME_TOKEN")}
if mode == "leaky":
    if request["eval_id"].endswith("_dies"):
        print(f"fatal: the model rejected key {seen['GOOGLE_API_KEY']}", file=sys.stderr)
        sys.exit(1)
    if request["eval_id"].endswith("_refuses"):
        print(json.dumps({"error": f"cannot authenticate with {seen['GOOGLE_API_KEY']} / {seen['GITHUB_TOKEN']}"}))
        sys.exit(0)
    answer = " ".join(f"{name}={value}" for name, value in seen.items())
    print(json.dumps({"turns": [{"response": answer, "tool_calls": [{"name": "lookup", "args": {"q": question}}]}]}))
elif mode == "broken":
    print(json.dumps({"turns": [{"response": "I do not know."}]}))
else:
    print(
        json.dumps(
            {
                "turns": [
                    {
                        "response": f"The answer to {question}",
                        "tool_calls": [{"name": "lookup", "args": {"q": question}}],
                    }
                ]
            }
        )
    )
