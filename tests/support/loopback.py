"""What every fake service of the tests shares: a threaded HTTP server on 127.0.0.1, and a complete reply."""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class LoopbackHTTPServer(ThreadingHTTPServer):
    # The standard library listens with a backlog of 5: a client that opens more connections at once than the
    # accept loop takes (a judge pool of 16, on a loaded machine) is refused, and a test would count the refusal
    # as the client's doing. A real service's backlog is far larger.
    request_queue_size = 256
    daemon_threads = True


class LoopbackServer:
    """Serves `handler` on a free port of 127.0.0.1 until `close()`."""

    def __init__(self, handler: type[BaseHTTPRequestHandler]) -> None:
        self.server = LoopbackHTTPServer(("127.0.0.1", 0), handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def reply(handler: BaseHTTPRequestHandler, status: int, data: bytes, content_type: str = "application/json") -> None:
    """One response with its length, so keep-alive clients (HTTP/1.1) read exactly it."""
    handler.send_response(status)
    handler.send_header("content-type", content_type)
    handler.send_header("content-length", str(len(data)))
    handler.end_headers()
    handler.wfile.write(data)
