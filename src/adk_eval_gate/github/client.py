"""A small GitHub REST client on requests: the API base from `GITHUB_API_URL`, retries for 5xx and for the
primary and secondary rate limits (honouring `Retry-After` / `x-ratelimit-reset`), `Link`-header pagination,
and errors that name the call and the status but never the token.

A POST is not retried after a 5xx or a lost connection: GitHub may have stored it before the reply was lost, and a
blind retry would create it twice. The caller looks first (see `GitHubError.maybe_applied`), or says the request
is safe to repeat (`idempotent=True`).

An API that does not answer (a closed port, a host that never replies, a name that never resolves) costs the whole
run at most NO_ANSWER_BUDGET seconds, attempts and back-off together, shared by every call to that API: once spent,
later calls fail at once, so a run with a dead API fails closed in seconds rather than minutes of retries per call.
The budget and the names already resolved belong to a `GitHubSession`, one per run: the command creates it (with
its `ActionsContext`) and every client of that run shares it; nothing of it outlives the run in the process.
"""

from __future__ import annotations

import ipaddress
import random
import socket
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import requests

from adk_eval_gate.core.clip import clip, single_line
from adk_eval_gate.core.json_types import JsonObject
from adk_eval_gate.core.redaction import redact_json
from adk_eval_gate.core.sealed import check_sealed
from adk_eval_gate.github.session import GitHubSession, ca_bundle, proxy_for

API_VERSION = "2022-11-28"
MAX_WAIT = 60.0  # a CI step should not sleep longer than this on one call
NO_ANSWER_BUDGET = 25.0  # seconds: with the rest of a failing run, under half a minute
CONNECT_TIMEOUT = 10.0


class NameLookupTimeout(requests.ConnectTimeout):
    """The API's host name did not resolve in time: requests' timeouts start only once a socket exists."""


def _resolve_within(url: str, seconds: float, session: GitHubSession) -> None:
    """A resolver that never answers would hold a request outside every timeout; looked up on a thread here, it
    costs at most `seconds`, counted like any attempt that got no answer. A name that does not exist is left to
    requests, which fails on it at once."""
    parts = urlsplit(url)
    host, port = parts.hostname, parts.port or (443 if parts.scheme == "https" else 80)
    if not host or session.resolved(host, port) or _is_address(host):
        return
    looked_up = threading.Event()

    def look_up() -> None:
        try:
            socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
            session.resolved_now(host, port)
        except (OSError, UnicodeError):
            pass
        finally:
            looked_up.set()

    threading.Thread(target=look_up, name="github-name-lookup", daemon=True).start()
    if not looked_up.wait(seconds):
        raise NameLookupTimeout(f"looking up {host} took more than {seconds:.0f} s")


def _is_address(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


class GitHubError(Exception):
    def __init__(self, method: str, path: str, status: int | None, message: str) -> None:
        self.method, self.path, self.status = method, path, status
        super().__init__(
            f"GitHub API {method} {path} failed" + (f" with HTTP {status}" if status else "") + f": {message}"
        )

    @property
    def maybe_applied(self) -> bool:
        """The request may have taken effect although no success came back (a 5xx or no answer)."""
        return self.status is None or self.status >= 500

    @property
    def read_only(self) -> bool:
        """The token may read but not write (fork pull requests, a read-only GITHUB_TOKEN)."""
        return self.status in (401, 403)


def _rate_limited(response: requests.Response) -> bool:
    if response.status_code == 429:
        return True
    if response.status_code != 403:
        return False
    body = response.text.lower()
    return (
        response.headers.get("x-ratelimit-remaining") == "0"
        or "secondary rate limit" in body
        or "rate limit exceeded" in body
        or "retry-after" in {k.lower() for k in response.headers}
    )


def _wait_for(response: requests.Response, attempt: int, backoff: float) -> float:
    retry_after = response.headers.get("retry-after")
    if retry_after:
        try:
            return min(MAX_WAIT, max(0.0, float(retry_after)))
        except ValueError:
            pass
    reset = response.headers.get("x-ratelimit-reset")
    if response.headers.get("x-ratelimit-remaining") == "0" and reset:
        try:
            return min(MAX_WAIT, max(0.0, float(reset) - time.time()))
        except ValueError:
            pass
    return float(min(MAX_WAIT, backoff * (2**attempt) * (0.5 + random.random())))


def _message(response: requests.Response) -> str:
    try:
        data = response.json()
        text = data.get("message") if isinstance(data, dict) else None
    except ValueError:
        text = None
    return clip(single_line(text or response.reason or ""), 200)


@dataclass(frozen=True)
class Patience:
    """How long a client waits on GitHub: retries of a transient failure, the first backoff (doubling), each
    request's timeout, and the sleep and clock it waits with (a test's own, to wait without waiting)."""

    retries: int = 4
    backoff: float = 1.0
    timeout: float = 30.0
    sleep: Callable[[float], None] = time.sleep
    clock: Callable[[], float] = time.monotonic


class GitHubClient:
    def __init__(
        self, api_url: str, token: str | None, *, patience: Patience = Patience(), session: GitHubSession | None = None
    ) -> None:
        """`session`: the run's, shared with its other clients (ActionsContext.client); none: a budget of its own."""
        self.api_url = api_url.rstrip("/")
        self.session = session or GitHubSession()
        self.retries, self.backoff, self.timeout = patience.retries, patience.backoff, patience.timeout
        self._sleep, self._clock = patience.sleep, patience.clock
        self._session = requests.Session()
        # Never the environment as it is at the call (nor ~/.netrc, whose login would replace our token): the proxy
        # and CA settings the session captured before the pull request's code ran (github/session.py).
        self._session.trust_env = False
        self._session.verify = ca_bundle(self.session.network)
        self._session.headers.update(
            {
                "Accept": "application/vnd.github+json",
                "X-GitHub-Api-Version": API_VERSION,
                "User-Agent": "adk-eval-gate",
            }
        )
        if token:
            self._session.headers["Authorization"] = f"Bearer {token}"

    def request(
        self,
        method: str,
        path: str,
        *,
        params: JsonObject | None = None,
        json: Any = None,
        accept: str | None = None,
        ok: tuple[int, ...] = (),
        idempotent: bool | None = None,
    ) -> requests.Response:
        """Returns the response for 2xx and for the statuses in `ok`; raises GitHubError otherwise.

        `idempotent` (default: every method but POST) allows a retry after a 5xx or a lost connection; rate limits
        are always retried, since GitHub refused those requests before doing anything."""
        url = path if path.startswith("http") else f"{self.api_url}{path}"
        headers = {"Accept": accept} if accept else None
        repeatable = method.upper() != "POST" if idempotent is None else idempotent
        json = redact_json(json)  # a comment, a check run, a baseline file: nothing we post carries a secret
        # A sealed process (core/sealed.py) sends the token only while the files it trusts (CA bundles, /etc/hosts,
        # its own install) are as they were before the pull request's code ran: one a process rewrote is refused.
        check_sealed()
        for attempt in range(self.retries + 1):
            left = self.no_answer_left()
            if left <= 0:
                raise GitHubError(method, path, None, self._unreachable("not tried", spent=True))
            started = self._clock()
            try:
                _resolve_within(url, min(CONNECT_TIMEOUT, left), self.session)
                response = self._session.request(
                    method,
                    url,
                    params=params,
                    json=json,
                    headers=headers,
                    proxies=proxy_for(url, self.session.network),
                    timeout=(min(CONNECT_TIMEOUT, left), min(self.timeout, left)),
                )
            except requests.RequestException as exc:
                left = self._silent_for(self._clock() - started)
                pause = min(MAX_WAIT, self.backoff * 2**attempt)
                if repeatable and attempt < self.retries and pause < left:
                    self._silent_for(pause)
                    self._sleep(pause)
                    continue
                raise GitHubError(
                    method, path, None, self._unreachable(type(exc).__name__, spent=pause >= left)
                ) from None
            self.session.answered(self.api_url)
            if response.status_code < 300 or response.status_code in ok:
                return response
            retryable = (repeatable and response.status_code >= 500) or _rate_limited(response)
            if retryable and attempt < self.retries:
                self._sleep(_wait_for(response, attempt, self.backoff))
                continue
            raise GitHubError(method, path, response.status_code, _message(response))
        raise AssertionError("unreachable")

    def no_answer_left(self) -> float:
        return NO_ANSWER_BUDGET - self.session.silence(self.api_url)

    def _silent_for(self, seconds: float) -> float:
        """Counts `seconds` without an answer against the API's budget; the seconds left."""
        self.session.add_silence(self.api_url, seconds)
        return self.no_answer_left()

    def _unreachable(self, what: str, *, spent: bool) -> str:
        text = f"no answer from {self.api_url} ({what})"
        if spent:
            text += f"; GitHub's API is unreachable: a run waits at most {NO_ANSWER_BUDGET:.0f} s for it in all"
        return text

    def pause(self, attempt: int) -> None:
        """The back-off before a caller's own retry (e.g. a create re-posted after looking again)."""
        self._sleep(min(MAX_WAIT, self.backoff * 2**attempt))

    def get_json(self, path: str, **kwargs: Any) -> Any:
        return self.request("GET", path, **kwargs).json()

    def paginate(
        self, path: str, params: JsonObject | None = None, *, key: str | None = None, limit: int = 5000
    ) -> Iterator[Any]:
        """Every item across pages (following `Link: rel="next"`), up to `limit` items."""
        url: str | None = path
        query: JsonObject | None = {"per_page": 100, **(params or {})}
        seen = 0
        while url:
            response = self.request("GET", url, params=query)
            data = response.json()
            items = data.get(key, []) if key else data
            for item in items:
                yield item
                seen += 1
                if seen >= limit:
                    return
            url = response.links.get("next", {}).get("url")
            query = None  # the next link carries the query

    def paginate_whole(self, path: str, *, limit: int, what: str) -> list[Any]:
        """Every item of a list a decision rests on, or GitHubError: a list cut at `limit` (or a page that is not a
        list) is no proof of what it does not show, so it is never returned in part. `what` names it for people."""
        items: list[Any] = []
        url: str | None = path
        query: dict[str, int] | None = {"per_page": 100}
        while url:
            response = self.request("GET", url, params=query)
            page = response.json()
            if not isinstance(page, list):
                raise GitHubError("GET", path, response.status_code, f"{what}: a page that is not a list")
            items.extend(page)
            url = response.links.get("next", {}).get("url")
            query = None
            if len(items) > limit or (url and len(items) >= limit):
                raise GitHubError("GET", path, None, f"{what} has more than {limit} entries; it is not read in part")
        return items
