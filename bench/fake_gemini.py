"""A stand-in for the Gemini API for the judging benchmark: `POST /v1beta/models/{model}:generateContent` answers
every request with the same text after a fixed delay, as a hosted judge model would; `GET /count` says how many
generate requests it has answered. It runs as its own process, so serving does not compete with the client
being measured for its interpreter lock.

    python bench/fake_gemini.py --latency 0.2 --reply-file reply.txt   # prints the base URL, then serves
"""

from __future__ import annotations

import argparse
import contextlib
import json
import subprocess
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path


def serve(latency: float, reply: str) -> None:
    lock = threading.Lock()
    answered = [0]

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: object) -> None:
            pass

        def _send(self, payload: bytes) -> None:
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(payload)))
            self.end_headers()
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                self.wfile.write(payload)

        def do_GET(self) -> None:
            with lock:
                self._send(json.dumps({"count": answered[0]}).encode())

        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("content-length", 0)))
            time.sleep(latency)
            with lock:
                answered[0] += 1
            self._send(
                json.dumps(
                    {
                        "candidates": [
                            {"content": {"role": "model", "parts": [{"text": reply}]}, "finishReason": "STOP"}
                        ],
                        "usageMetadata": {
                            "promptTokenCount": 100,
                            "candidatesTokenCount": 20,
                            "totalTokenCount": 120,
                        },
                    }
                ).encode()
            )

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    print(f"http://127.0.0.1:{server.server_address[1]}", flush=True)
    server.serve_forever()


class FakeGeminiProcess:
    """Starts the server in a child process; `url`, `count()`, `close()`."""

    def __init__(self, latency: float, reply: str) -> None:
        with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as file:
            file.write(reply)
        self._reply_file = Path(file.name)
        self._process = subprocess.Popen(
            [sys.executable, __file__, "--latency", str(latency), "--reply-file", str(self._reply_file)],
            stdout=subprocess.PIPE,
            text=True,
        )
        self.url = self._process.stdout.readline().strip()

    def count(self) -> int:
        import urllib.request

        with urllib.request.urlopen(f"{self.url}/count") as response:
            return json.loads(response.read())["count"]

    def close(self) -> None:
        self._process.terminate()
        self._process.wait()
        self._reply_file.unlink(missing_ok=True)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--reply-file", required=True)
    args = parser.parse_args()
    serve(args.latency, Path(args.reply_file).read_text())
