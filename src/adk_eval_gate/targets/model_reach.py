"""Before the first case: can the endpoint of every Gemini model the agent tree uses be reached at all?

A model call to an endpoint that cannot be resolved or connected to is retried by google-genai under the retry
options `adk eval` adds (7 attempts, 5 s doubling to 120 s: about 4 min 35 s per call), and every case makes
one, each ending in a traceback. One request here (any HTTP answer at all counts as reached: a 404 is an
endpoint that is there) settles it in seconds: unresolvable, refused, timed out or refused by the proxy is one
line before any case runs. A failure mid-run (a network that drops later) is still retried as before.

The endpoint is found as google-genai finds it: the model's own `base_url`, else GOOGLE_GEMINI_BASE_URL (Vertex
AI: GOOGLE_VERTEX_BASE_URL, else the location's host), else the public one; proxies and certificates come from
the environment as they do for google-genai's own httpx client. Only google-adk's own `Gemini` is probed (the
models model_credentials.py checks); other model classes reach their endpoints their own way.
"""

from __future__ import annotations

import ssl
from collections.abc import Mapping
from functools import cache

from adk_eval_gate.config.offline import OFFLINE_COMMAND
from adk_eval_gate.core.errors import InputError
from adk_eval_gate.targets.case_run import one_line
from adk_eval_gate.targets.model_credentials import agent_tree, gemini_model

PROBE_SECONDS = 4.0  # per phase (connect, read): a reachable endpoint answers a bare GET in well under that
_TRUE = {"1", "true", "yes"}


def endpoint(model: object, env: Mapping[str, str]) -> str:
    """The base URL google-genai would send this model's requests to."""
    if base := getattr(model, "base_url", None):
        return str(base)
    if env.get("GOOGLE_GENAI_USE_VERTEXAI", "").strip().lower() in _TRUE:
        if base := env.get("GOOGLE_VERTEX_BASE_URL"):
            return base
        location = env.get("GOOGLE_CLOUD_LOCATION", "") or "global"
        return (
            "https://aiplatform.googleapis.com/"
            if location == "global"
            else f"https://{location}-aiplatform.googleapis.com/"
        )
    return env.get("GOOGLE_GEMINI_BASE_URL") or "https://generativelanguage.googleapis.com/"


@cache  # once per process: workers forked from the agent host inherit its answer and ask no more
def unreachable(url: str) -> str | None:
    """Why the endpoint cannot be reached (unresolvable, refused, no answer to connect, a proxy refusing), or None.
    The standard library's client, with the environment's proxies: google-genai runs on httpx or httpx2, and
    importing either ourselves breaks it (tests/integration/criteria/test_judge_failures.py)."""
    import urllib.error
    import urllib.request

    try:
        with urllib.request.urlopen(url, timeout=PROBE_SECONDS):
            return None
    except urllib.error.HTTPError:  # any answer at all: the endpoint is there
        return None
    except urllib.error.URLError as exc:  # no connection: the reason is the socket's (DNS, refused, timed out)
        if isinstance(exc.reason, ssl.SSLError):  # connected; certificates are the model call's own business
            return None
        reason = exc.reason
        return one_line(reason) if isinstance(reason, BaseException) else str(reason)
    except (OSError, ValueError) as exc:  # a read that timed out once connected: reached; a URL that is no URL
        return None if isinstance(exc, OSError) else one_line(exc)


def unreachable_model(root: object, env: Mapping[str, str]) -> tuple[str, str, str] | None:
    """(model name, endpoint, why) for the first Gemini model of the tree whose endpoint cannot be reached."""
    for agent in agent_tree(root):
        model = gemini_model(agent)
        if model is None:
            continue
        url = endpoint(model, env)
        if (why := unreachable(url)) is not None:
            proxied = any(env.get(name) for name in ("https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"))
            return str(model.model), url, why + (" — through the proxy https_proxy names" if proxied else "")
    return None


class UnreachableModel(InputError):
    """The model's endpoint cannot be reached: `ci` stops on it; `validate` notes it (a network, not a config)."""


def require_reachable(reference: str, root: object, env: Mapping[str, str]) -> None:
    """One line before any case runs, instead of minutes of retries and a traceback in every case."""
    if (found := unreachable_model(root, env)) is None:
        return
    model, url, why = found
    raise UnreachableModel(
        reference,
        "target.agent",
        f"the agent's model {model} cannot be reached at {url} ({why})",
        "check the network, the proxy (https_proxy) and GOOGLE_GEMINI_BASE_URL, or run without a network: "
        f"{OFFLINE_COMMAND} (docs/try-it-offline.md)",
    )
