"""`http` target: an agent served by `adk api_server` (locally, on Cloud Run, behind a gateway).

Per case and run: create a session (`POST /apps/{app}/users/{user}/sessions` with the case's state), then one
`POST /run` per user turn; the returned events become the turn's invocation with ADK's rules. Header values
come from environment variables named in the config, so tokens never sit in a file or a log.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import requests

from adk_eval_gate.config.target_settings import HttpTargetSettings as HttpSettings
from adk_eval_gate.core.clip import clip, single_line
from adk_eval_gate.core.errors import InputError
from adk_eval_gate.core.held_tokens import held, is_github_token_name
from adk_eval_gate.core.json_types import JsonObject
from adk_eval_gate.evalsets.adk_eval_schema import EvalCase
from adk_eval_gate.evalsets.agents_cli_dataset import prior_events
from adk_eval_gate.targets.case_run import CaseRun, TargetError, TransientTargetError
from adk_eval_gate.targets.events import content_of, events_to_invocation
from adk_eval_gate.targets.simulation import SimulationSettings, Users

TRANSIENT_STATUS = {408, 429, 502, 503, 504}


class HttpTarget:
    kind = "http"

    def __init__(
        self, settings: HttpSettings, max_workers: int = 64, simulation: SimulationSettings | None = None
    ) -> None:
        self._settings = settings
        self._users = Users(simulation)
        self._base = settings.url.rstrip("/")
        self._headers = self._resolve_headers(settings.headers_from_env)
        self._pool = ThreadPoolExecutor(max_workers=max_workers, thread_name_prefix="adk-eval-gate-http")
        self._local = threading.local()

    @staticmethod
    def _resolve_headers(headers_from_env: dict[str, str]) -> dict[str, str]:
        """From the environment alone: GitHub's tokens are held out of it (core/held_tokens.py) and are never
        sent, since the config (the pull request's own copy) chooses the URL they would go to."""
        tokens = {value.strip() for value in held().values() if value.strip()}
        headers = {}
        for header, variable in headers_from_env.items():
            value = os.environ.get(variable)
            if is_github_token_name(variable.strip()) or (value is not None and value.strip() in tokens):
                raise InputError(  # a token's name, or a workflow that copied the token under another name
                    None,
                    f"target.headers_from_env.{header}",
                    f"{variable} is one of GitHub's tokens, which is never sent to an agent's server",
                    "give the agent's server a credential of its own",
                )
            if value is None:
                raise InputError(
                    None,
                    f"target.headers_from_env.{header}",
                    f"environment variable {variable} is not set",
                    f"export {variable} (e.g. from a repository secret)",
                )
            headers[header] = value
        return headers

    async def start(self) -> None:
        return None

    def _session(self) -> requests.Session:
        session = getattr(self._local, "session", None)
        if session is None:
            session = self._local.session = requests.Session()
            session.headers.update(self._headers)
        return session

    def _call(self, method: str, path: str, body: object = None) -> Any:
        url = f"{self._base}{path}"
        timeout = (self._settings.connect_timeout, self._settings.read_timeout)
        try:
            response = self._session().request(method, url, json=body, timeout=timeout)
        except requests.Timeout as exc:
            raise TransientTargetError(f"{method} {path}: no answer in time ({type(exc).__name__})") from None
        except requests.ConnectionError as exc:
            reason = type(exc.__context__ or exc).__name__ if exc.__context__ else "connection failed"
            raise TransientTargetError(f"{method} {path}: connection dropped or refused ({reason})") from None
        if response.status_code >= 400:
            detail = clip(single_line(response.text), 200)
            message = f"{method} {path} returned HTTP {response.status_code}: {detail or response.reason}"
            if response.status_code in TRANSIENT_STATUS:
                raise TransientTargetError(message)
            raise TargetError(message)
        try:
            return response.json()
        except ValueError:
            raise TargetError(f"{method} {path} returned a body that is not JSON") from None

    async def _request(self, method: str, path: str, body: object = None) -> Any:
        return await asyncio.get_running_loop().run_in_executor(self._pool, self._call, method, path, body)

    async def run_case(self, eval_set_id: str, case: EvalCase, run: int) -> CaseRun:
        user = self._users.for_case(eval_set_id, case, run)
        app = self._settings.app_name
        session_input = case.session_input
        user_id = session_input.user_id if session_input and session_input.user_id else "test_user_id"
        body: JsonObject = {"state": dict(session_input.state) if session_input else {}}
        if session_input and session_input.session_id:
            body["session_id"] = session_input.session_id
        if prior := prior_events(case):  # an agents-cli Shape B case: its earlier turns, as eval generate posts
            body["events"] = prior
        session = await self._request("POST", f"/apps/{app}/users/{user_id}/sessions", body)
        session_id = session.get("id") if isinstance(session, dict) else None
        if not session_id:
            raise TargetError("creating the session returned no session id")
        invocations = []
        history: list[tuple[str, Any]] = []
        try:
            while (message := await user.next_message(history)) is not None:
                started = time.monotonic()
                events = await self._request(
                    "POST",
                    "/run",
                    {
                        "app_name": app,
                        "user_id": user_id,
                        "session_id": session_id,
                        "streaming": False,
                        "new_message": message.model_dump(mode="json", exclude_none=True),
                    },
                )
                if not isinstance(events, list) or not all(isinstance(e, dict) for e in events):
                    raise TargetError("POST /run did not return a list of events")
                history += [("user", message), *((e.get("author") or "", content_of(e)) for e in events)]
                invocations.append(
                    events_to_invocation(
                        events, message, creation_timestamp=time.time(), duration=round(time.monotonic() - started, 3)
                    )
                )
        finally:
            with contextlib.suppress(TargetError):  # cleanup only; the server may not keep sessions at all
                await self._request("DELETE", f"/apps/{app}/users/{user_id}/sessions/{session_id}")
        return CaseRun(eval_set_id, case.eval_id, run, tuple(invocations), simulator_usage=user.usage)

    async def aclose(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)
