"""The GitHub client connects as the workflow's environment said when the run started (its proxy honoured, for
runners behind one), never as the environment says at the call: a proxy set later in this process (an agent's
`.env`, an agent running here) never sees the token; nor does ~/.netrc replace it (issue 34)."""

from __future__ import annotations

from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import ClassVar

import pytest

from adk_eval_gate.github.client import GitHubClient, GitHubError, Patience
from adk_eval_gate.github.session import GitHubSession, ca_bundle, network_settings, proxy_for
from tests.support.loopback import LoopbackServer, reply

TOKEN = "ghs_" + "N" * 36


class Recording(BaseHTTPRequestHandler):
    seen: ClassVar[list[tuple[str, str, str]]] = []

    def do_GET(self) -> None:
        Recording.seen.append((self.server.server_address[1], self.path, self.headers.get("Authorization", "")))
        reply(self, 200, b"{}")

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def servers():
    Recording.seen = []
    proxy, api = LoopbackServer(Recording), LoopbackServer(Recording)
    try:
        yield proxy, api
    finally:
        proxy.close()
        api.close()


def ports(proxy: LoopbackServer, api: LoopbackServer) -> tuple[int, int]:
    return proxy.server.server_address[1], api.server.server_address[1]


def clear(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY", "http_proxy", "https_proxy", "all_proxy"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.delenv("no_proxy", raising=False)


def test_a_proxy_set_after_the_session_never_sees_the_token(servers, monkeypatch, tmp_path: Path):
    proxy, api = servers
    clear(monkeypatch)
    session = GitHubSession()  # the run's start: no proxy in the workflow's environment
    monkeypatch.setenv("HTTP_PROXY", proxy.url)
    monkeypatch.setenv("ALL_PROXY", proxy.url)
    netrc = tmp_path / ".netrc"
    netrc.write_text("machine 127.0.0.1 login pr password stolen\n")
    monkeypatch.setenv("NETRC", str(netrc))
    monkeypatch.setenv("HOME", str(tmp_path))
    GitHubClient(api.url, TOKEN, session=session).request("GET", "/repos/o/r")
    api_port = ports(proxy, api)[1]
    assert [(port, auth) for port, _, auth in Recording.seen] == [(api_port, f"Bearer {TOKEN}")]


def test_the_workflows_proxy_is_honoured(servers, monkeypatch):
    proxy, api = servers
    clear(monkeypatch)
    monkeypatch.setenv("http_proxy", proxy.url)
    session = GitHubSession()
    monkeypatch.delenv("http_proxy")  # what the environment says later does not matter either way
    GitHubClient(api.url, TOKEN, session=session, patience=Patience(retries=0)).request("GET", "/repos/o/r")
    proxy_port = ports(proxy, api)[0]
    assert [(port, path) for port, path, _ in Recording.seen] == [(proxy_port, f"{api.url}/repos/o/r")]


def test_no_proxy_as_requests_reads_it(servers, monkeypatch):
    proxy, api = servers
    clear(monkeypatch)
    session = GitHubSession({"HTTP_PROXY": proxy.url, "NO_PROXY": "example.com,127.0.0.0/8"})
    GitHubClient(api.url, TOKEN, session=session).request("GET", "/repos/o/r")
    assert [port for port, _, _ in Recording.seen] == [ports(proxy, api)[1]]


def test_settings_are_requests_own_choice():
    env = {"HTTPS_PROXY": "http://upper:1", "https_proxy": "http://lower:1", "ALL_PROXY": "http://all:1"}
    settings = network_settings({**env, "PYTHONPATH": "/x", "REQUESTS_CA_BUNDLE": "/ca.pem", "SSL_CERT_FILE": "/o"})
    assert settings == {
        "https_proxy": "http://lower:1",
        "all_proxy": "http://all:1",
        "REQUESTS_CA_BUNDLE": "/ca.pem",
    }
    assert proxy_for("https://api.github.com/x", settings) == {"https": "http://lower:1"}
    assert proxy_for("http://api.github.com/x", settings) == {"http": "http://all:1"}
    assert proxy_for("https://api.github.com/x", {**settings, "no_proxy": "github.com"}) == {}
    assert proxy_for("https://10.1.2.3/x", {**settings, "no_proxy": "10.0.0.0/8"}) == {}
    assert proxy_for("https://api.github.com/x", {**settings, "no_proxy": "*"}) == {}
    assert ca_bundle(settings) == "/ca.pem" and ca_bundle({}) is True


def test_an_unanswering_proxy_fails_closed(monkeypatch):
    clear(monkeypatch)
    session = GitHubSession({"HTTP_PROXY": "http://127.0.0.1:9"})  # the workflow's, but down
    with pytest.raises(GitHubError):
        GitHubClient("http://127.0.0.1:1", TOKEN, session=session, patience=Patience(retries=0)).request("GET", "/x")
