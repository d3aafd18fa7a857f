"""What one run's GitHub clients share, kept apart from the client so that holding a run's context does not import
requests (a `history show` over a file store never talks to GitHub)."""

from __future__ import annotations

import threading


class GitHubSession:
    """The baseline store, the labels and the comment each build their own client, and the no-answer budget must hold
    for them all: the seconds spent without an answer, per API base, and the host names that resolved once. Threads
    may share it (the name look-up records from its own). The budget itself is the client's (github/client.py)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        # seconds spent on attempts that got no answer, per API base, since that API last answered
        self._silence: dict[str, float] = {}
        self._resolved: set[tuple[str, int]] = set()  # names that resolved once in this run: not looked up again

    def add_silence(self, api_url: str, seconds: float) -> None:
        with self._lock:
            self._silence[api_url] = self._silence.get(api_url, 0.0) + max(0.0, seconds)

    def silence(self, api_url: str) -> float:
        with self._lock:
            return self._silence.get(api_url, 0.0)

    def answered(self, api_url: str) -> None:
        with self._lock:
            self._silence.pop(api_url, None)

    def resolved(self, host: str, port: int) -> bool:
        with self._lock:
            return (host, port) in self._resolved

    def resolved_now(self, host: str, port: int) -> None:
        with self._lock:
            self._resolved.add((host, port))
