"""A GitHub API that does not answer fails the run closed, within one budget for the whole run (25 s of
attempts and back-off together), and says so: a closed loopback port and a server that accepts and never replies.
"""

from __future__ import annotations

import dataclasses
import json
import socket
import threading
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import pytest
import requests

from adk_eval_gate.github import client as client_module
from adk_eval_gate.github.client import GitHubClient, GitHubError, GitHubSession, Patience
from adk_eval_gate.github.context import ActionsContext
from tests.support.hostile import run_cli
from tests.support.loopback import LoopbackServer, reply


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]  # nobody listens once the socket is closed: connections are refused


class FakeClock:
    """Time that passes only when the client sleeps: the budget's arithmetic without waiting for it."""

    def __init__(self) -> None:
        self.now, self.sleeps = 0.0, []

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds


def test_the_budget_for_an_unreachable_api_is_at_most_30_seconds():
    assert client_module.NO_ANSWER_BUDGET <= 30
    assert client_module.CONNECT_TIMEOUT <= client_module.NO_ANSWER_BUDGET


def test_a_closed_port_costs_the_whole_run_at_most_the_budget():
    url, clock, session = f"http://127.0.0.1:{closed_port()}", FakeClock(), GitHubSession()
    errors = []
    # the baseline store, the labels, the comment, the check run...: each its own client, one budget for all
    for retries in (10, 4, 4, 4, 4, 4):
        github = GitHubClient(
            url, "t", session=session, patience=Patience(retries=retries, backoff=1.0, sleep=clock.sleep, clock=clock)
        )
        with pytest.raises(GitHubError) as raised:
            github.get_json("/repos/o/r/issues/7/labels")
        errors.append(raised.value)
    assert all(e.status is None and f"no answer from {url}" in str(e) for e in errors)
    assert "GitHub's API is unreachable" in str(errors[0]) and "25 s" in str(errors[0])
    assert clock.now <= client_module.NO_ANSWER_BUDGET  # not 6 calls x (1+2+4+8 s), nor 10 retries' 17 minutes


def test_an_answer_gives_the_api_its_whole_budget_back():
    port, clock, session = closed_port(), FakeClock(), GitHubSession()
    url = f"http://127.0.0.1:{port}"
    with pytest.raises(GitHubError):
        GitHubClient(url, "t", session=session, patience=Patience(retries=1, sleep=clock.sleep, clock=clock)).get_json(
            "/user"
        )
    assert GitHubClient(url, "t", session=session).no_answer_left() < client_module.NO_ANSWER_BUDGET

    class Answer(BaseHTTPRequestHandler):
        def do_GET(self):
            reply(self, 200, b"{}")

        def log_message(self, *args):
            pass

    class SamePort(LoopbackServer):
        def __init__(self) -> None:
            import threading
            from http.server import ThreadingHTTPServer

            self.server = ThreadingHTTPServer(("127.0.0.1", port), Answer)
            threading.Thread(target=self.server.serve_forever, daemon=True).start()

    server = SamePort()
    try:
        assert GitHubClient(url, "t", session=session).get_json("/user") == {}
    finally:
        server.close()
    assert GitHubClient(url, "t", session=session).no_answer_left() == client_module.NO_ANSWER_BUDGET


def test_the_budget_is_the_runs_not_the_processes():
    """Two runs in one process (a test suite, an integration calling `ci` twice): the second gets its whole budget,
    and every copy of a run's context shares its session."""
    url, clock = f"http://127.0.0.1:{closed_port()}", FakeClock()
    first = ActionsContext(api_url=url, token="t")
    with pytest.raises(GitHubError):
        GitHubClient(
            url, "t", session=first.github, patience=Patience(retries=1, sleep=clock.sleep, clock=clock)
        ).get_json("/user")
    assert first.client().no_answer_left() < client_module.NO_ANSWER_BUDGET
    assert dataclasses.replace(first, event={"x": 1}).client().no_answer_left() == first.client().no_answer_left()
    assert ActionsContext(api_url=url, token="t").client().no_answer_left() == client_module.NO_ANSWER_BUDGET
    assert not [name for name in vars(client_module) if name.startswith("_") and name[1:2] != "_" and isinstance(
        getattr(client_module, name), (dict, set, list))]  # fmt: skip


def test_a_server_that_never_answers_is_given_up_on_within_the_budget(monkeypatch):
    monkeypatch.setattr(client_module, "NO_ANSWER_BUDGET", 1.0)  # the real 30 s, scaled down for the suite
    timeouts = []  # what each attempt may wait: (connect, read) seconds, as handed to requests
    send = requests.Session.request

    def recording(self, method, url, **kwargs):
        timeouts.append(kwargs["timeout"])
        return send(self, method, url, **kwargs)

    monkeypatch.setattr(requests.Session, "request", recording)
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)  # connections complete in the kernel's backlog; nothing is ever read or written
        url = f"http://127.0.0.1:{silent.getsockname()[1]}"
        session = GitHubSession()
        with pytest.raises(GitHubError) as raised:
            GitHubClient(url, "t", session=session).get_json("/repos/o/r/actions/artifacts")
        assert f"no answer from {url}" in str(raised.value) and "unreachable" in str(raised.value)
        # every wait is bounded by what is left of the budget: without it each attempt may wait 30 s, 5 attempts
        assert timeouts and all(max(t) <= 1.0 for t in timeouts), timeouts
        tried = len(timeouts)
        with pytest.raises(GitHubError, match="unreachable") as again:
            GitHubClient(url, "t", session=session).request("POST", "/repos/o/r/issues/7/comments", json={"body": "x"})
        assert len(timeouts) == tried and "not tried" in str(again.value)  # the budget is spent: no wait again


def test_ci_with_an_unreachable_api_fails_closed_and_says_why(example, capsys, monkeypatch):
    monkeypatch.setattr(client_module, "NO_ANSWER_BUDGET", 3.0)
    monkeypatch.chdir(example)
    event = example / "event.json"
    event.write_text(
        json.dumps(
            {
                "pull_request": {
                    "number": 7,
                    "head": {"sha": "c" * 40},
                    "base": {"sha": "b" * 40, "ref": "main"},
                    "labels": [],
                },
                "repository": {"default_branch": "main"},
            }
        )
    )
    url = f"http://127.0.0.1:{closed_port()}"
    for key, value in {
        "GITHUB_ACTIONS": "true",
        "GITHUB_EVENT_NAME": "pull_request",
        "GITHUB_EVENT_PATH": str(event),
        "GITHUB_API_URL": url,
        "GITHUB_REPOSITORY": "o/r",
        "GITHUB_TOKEN": "ghs_token",
        "GITHUB_RUN_ID": "5",
        "GITHUB_WORKSPACE": str(example),
    }.items():
        monkeypatch.setenv(key, value)
    # A closed port refuses at once: the run's waiting is its back-off, here on a clock that moves only when the
    # clients sleep, so the sum of every wait of every client of the run is read, not timed.
    clock = FakeClock()
    monkeypatch.setitem(GitHubClient.__init__.__kwdefaults__, "patience", Patience(sleep=clock.sleep, clock=clock))
    # replay.yml names no baseline: the artifact store, read through the API
    code, out, err = run_cli(["ci", "--config", "replay.yml", "--output-dir", "out", "--quiet"], capsys, seconds=120)
    assert code == 1, err
    assert "the baseline could not be loaded" in out and f"no answer from {url}" in err
    assert "GitHub's API is unreachable" in out
    assert clock.sleeps and clock.now <= 3.0  # the budget (3 s here, 25 s for real) bounds the whole run's waiting
    assert Path(example / "out" / "results.json").exists()  # files first: a dead API never loses the run


def test_a_name_that_never_resolves_is_given_up_on_within_the_budget(monkeypatch):
    """DNS sits outside requests' timeouts: a resolver that never answers would hold the run for ever."""
    monkeypatch.setattr(client_module, "NO_ANSWER_BUDGET", 1.0)  # the real 25 s, scaled down for the suite
    resolve, answer = socket.getaddrinfo, threading.Event()

    def hanging_resolver(host, *args, **kwargs):
        if str(host).endswith(".invalid"):
            answer.wait()  # a resolver that never answers
            raise socket.gaierror("no answer")
        return resolve(host, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", hanging_resolver)
    url = "http://api.never-answers.invalid"
    try:
        with pytest.raises(GitHubError) as raised:
            GitHubClient(url, "t").get_json("/repos/o/r/actions/artifacts")
        # the call returned while the resolver still hangs (it answers only below): it did not wait for it
        assert not answer.is_set()
    finally:
        answer.set()
    assert "NameLookupTimeout" in str(raised.value) and "unreachable" in str(raised.value)
