"""What one run's GitHub clients share, kept apart from the client so that holding a run's context does not import
requests (a `history show` over a file store never talks to GitHub)."""

from __future__ import annotations

import ipaddress
import os
import re
import threading
from collections.abc import Mapping
from urllib.parse import urlsplit

# The variables that decide how requests connects (requests' own names: proxies, no_proxy, CA bundles). The run's
# clients read them once, when the session is made at the command's start, before any of the pull request's code
# ran: nothing later put in this process's environment (an agent running here, a `.env`) steers the token.
_NETWORK = re.compile(r"^(https?_proxy|all_proxy|no_proxy)$", re.IGNORECASE)
_CA_BUNDLES = ("REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE")  # requests' order, when it trusts the environment


class GitHubSession:
    """The baseline store, the labels and the comment each build their own client, and the no-answer budget must hold
    for them all: the seconds spent without an answer, per API base, and the host names that resolved once. Threads
    may share it (the name look-up records from its own). The budget itself is the client's (github/client.py)."""

    def __init__(self, env: Mapping[str, str] | None = None) -> None:
        self.network = network_settings(os.environ if env is None else env)
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


def network_settings(env: Mapping[str, str]) -> dict[str, str]:
    """The proxy and CA-bundle variables of `env` that are set, lower-case proxy names winning as in urllib."""
    found = {name: value for name, value in env.items() if value and name in _CA_BUNDLES}
    for name in sorted((n for n in env if _NETWORK.match(n) and env[n]), key=lambda n: n.islower()):
        found[name.lower()] = env[name]  # upper case first, so a lower-case twin overrides it
    return found


def proxy_for(url: str, network: Mapping[str, str]) -> dict[str, str]:
    """requests' `proxies` for `url` from captured settings (its own choice: `<scheme>_proxy`, else `all_proxy`,
    unless `no_proxy` names the host), so the session never reads the environment itself."""
    parts = urlsplit(url)
    proxy = network.get(f"{parts.scheme}_proxy") or network.get("all_proxy")
    if not proxy or _bypassed(parts.hostname or "", parts.port, network.get("no_proxy", "")):
        return {}
    return {parts.scheme: proxy}


def _bypassed(host: str, port: int | None, no_proxy: str) -> bool:
    entries = [entry for entry in no_proxy.replace(" ", "").split(",") if entry]
    if "*" in entries:
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        address = None
    for entry in entries:
        if address is not None and "/" in entry:
            try:
                if address in ipaddress.ip_network(entry, strict=False):
                    return True
            except ValueError:
                continue
        elif host == entry or host.endswith(entry) or (port and f"{host}:{port}".endswith(entry)):
            return True
    return False


def ca_bundle(network: Mapping[str, str]) -> str | bool:
    """requests' `verify`: the captured CA bundle, else its own (certifi's)."""
    return next((network[name] for name in _CA_BUNDLES if network.get(name)), True)
