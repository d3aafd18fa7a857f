"""A fake Gemini API on 127.0.0.1 (`POST /v1beta/models/{model}:generateContent`) for the real google-genai client.

Replies are scripted by a function of the prompt; faults (a status with headers, or a delay) are injected for the
next N calls whose prompt contains a given text. Every request is counted.
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler

from tests.support.loopback import LoopbackHTTPServer


@dataclass
class GeminiFault:
    contains: str
    status: int = 0  # 0: answer normally, after `delay`
    times: int = 1
    delay: float = 0.0
    headers: dict[str, str] = field(default_factory=dict)


class FakeGemini:
    def __init__(self, reply: Callable[[str], str]) -> None:
        self.reply = reply
        self.requests: list[dict] = []
        self.faults: list[GeminiFault] = []
        self.model_version: str | None = None  # set: every answer names it, as Gemini's `modelVersion`
        lock = threading.Lock()
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))) or b"{}")
                prompt = "".join(p.get("text", "") for c in body.get("contents", []) for p in c.get("parts", []))
                with lock:
                    fake.requests.append(
                        {
                            "path": self.path,
                            "prompt": prompt,
                            "key": self.headers.get("x-goog-api-key"),
                            "config": body.get("generationConfig"),
                        }
                    )
                    fault = next((f for f in fake.faults if f.times > 0 and f.contains in prompt), None)
                    if fault:
                        fault.times -= 1
                if fault and fault.delay:
                    time.sleep(fault.delay)
                if fault and fault.status:
                    payload = json.dumps(
                        {"error": {"code": fault.status, "message": "scripted fault", "status": "UNAVAILABLE"}}
                    ).encode()
                    self.send_response(fault.status)
                    for key, value in fault.headers.items():
                        self.send_header(key, value)
                else:
                    text = fake.reply(prompt)
                    payload = json.dumps(
                        {
                            "candidates": [
                                {"content": {"role": "model", "parts": [{"text": text}]}, "finishReason": "STOP"}
                            ],
                            "usageMetadata": {
                                "promptTokenCount": len(prompt) // 4,
                                "candidatesTokenCount": 20,
                                "totalTokenCount": len(prompt) // 4 + 20,
                            },
                            **({"modelVersion": fake.model_version} if fake.model_version else {}),
                        }
                    ).encode()
                    self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(payload)))
                self.end_headers()
                with contextlib.suppress(BrokenPipeError, ConnectionResetError):  # the client gave up (a timeout)
                    self.wfile.write(payload)

        self.server = LoopbackHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()


def verdict(label: str) -> str:
    return json.dumps({"reasoning": ["scripted"], "is_the_agent_response_valid": [label]})


def cycling(scripts: dict[str, list[str]], marker: str) -> Callable[[str], str]:
    """A reply function: the prompt's `marker.format(key)` picks a script, whose replies are handed out in turn."""
    counts: Counter = Counter()

    def reply(prompt: str) -> str:
        key = next(k for k in scripts if marker.format(k) in prompt)
        counts[key] += 1
        return scripts[key][(counts[key] - 1) % len(scripts[key])]

    return reply
