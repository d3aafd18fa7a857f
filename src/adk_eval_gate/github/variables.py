"""GitHub's environment variables and the Action's boolean inputs, checked before any work.

The same rule holds in Actions and in any other CI that sets them: a value the gate would act on must have its
shape, or it is exit 2 naming the variable. An API URL that is not a URL, or a repository without an owner, would
otherwise be tried against the network (and retried) before failing; a run id that is not a number would
silently keep the comment from recording which run wrote it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from urllib.parse import urlsplit

from adk_eval_gate.core.clip import clip
from adk_eval_gate.core.errors import InputError

# Owners may carry `_` (Enterprise Managed Users' `name_shortcode`); `.` and `..` would walk the API's paths.
_REPOSITORY = re.compile(r"[A-Za-z0-9_.-]{1,100}/[A-Za-z0-9_.-]{1,100}")
_SHA = re.compile(r"[0-9a-fA-F]{7,64}")
_EVENT_NAME = re.compile(r"[a-z][a-z_]{0,63}")
_NUMBER = re.compile(r"[0-9]{1,19}")

OUTSIDE = "unset it to run locally"

# Variables taken as they are once they have their shape: (name, check, what it must be, how to fix it).
_SHAPES = (
    ("GITHUB_SHA", _SHA.fullmatch, "a commit sha", "set it to the commit's full hex sha"),
    (
        "GITHUB_REF",
        # `main` would never equal refs/heads/main: the push would quietly run as local and store nothing
        lambda ref: ref.startswith("refs/") and not re.search(r"\s", ref),
        "a full ref",
        "write it as GitHub does (refs/heads/main, refs/pull/7/merge)",
    ),
    (
        "GITHUB_EVENT_NAME",
        _EVENT_NAME.fullmatch,
        "an event name",
        "use GitHub's name (pull_request, push, workflow_run, ...)",
    ),
)

# The spellings GitHub's toolkit (getBooleanInput) takes, `true | True | TRUE | false | False | FALSE`, plus the
# yes/no/1/0 an earlier version of this Action accepted, in any case: a superset, so no working input breaks.
TRUE_WORDS = ("true", "yes", "1")
FALSE_WORDS = ("false", "no", "0")


def boolean_input(name: str, value: str) -> bool:
    word = value.strip().lower()
    if word in TRUE_WORDS:
        return True
    if word in FALSE_WORDS:
        return False
    raise InputError(
        None,
        name,
        f"{clip(value.strip(), 60)!r} is not a boolean",
        "use true or false (yes/no and 1/0 are accepted too, in any case)",
    )


def _url(name: str, value: str, example: str) -> str:
    try:
        parts = urlsplit(value)
        parts.port  # noqa: B018 - a port that is not a number raises here
    except ValueError:
        parts = None
    if parts is None or parts.scheme not in ("http", "https") or not parts.hostname or re.search(r"\s", value):
        raise InputError(None, name, f"{clip(value, 80)!r} is not an http(s) URL", f"set it to {example}, or {OUTSIDE}")
    return value.rstrip("/")


def _number(name: str, value: str) -> str:
    if not _NUMBER.fullmatch(value) or int(value) == 0:
        raise InputError(
            None,
            name,
            f"{clip(value, 40)!r} is not a positive whole number",
            f"GitHub sets it to the run's number; pass it unchanged, or {OUTSIDE}",
        )
    return value


def check_token(name: str, value: str) -> str:
    token = value.strip()  # a secret pasted with its trailing newline is still the token
    if any(ord(c) <= 32 or ord(c) >= 127 for c in token):
        # never quote a token, not even a broken one
        raise InputError(
            None,
            name,
            "holds spaces, line breaks or non-ASCII characters",
            "pass the token alone, e.g. ${{ secrets.GITHUB_TOKEN }}",
        )
    return token


def check_variables(env: Mapping[str, str]) -> dict[str, str]:
    """The variables the gate reads, each checked; an empty one counts as unset (GitHub sets GITHUB_BASE_REF
    to "" outside pull requests). Returns the cleaned values of those that are set."""
    values = {name: value for name, value in env.items() if name.startswith(("GITHUB_", "INPUT_")) and value.strip()}
    out: dict[str, str] = {}
    for name, example in (
        (
            "GITHUB_API_URL",
            "GitHub's API (https://api.github.com, or https://HOST/api/v3 on GitHub Enterprise Server)",
        ),
        ("GITHUB_SERVER_URL", "GitHub's address (https://github.com)"),
    ):
        if name in values:
            out[name] = _url(name, values[name], example)
    if "GITHUB_REPOSITORY" in values:
        value = values["GITHUB_REPOSITORY"]
        if not _REPOSITORY.fullmatch(value) or any(part in (".", "..") for part in value.split("/")):
            raise InputError(
                None,
                "GITHUB_REPOSITORY",
                f"{clip(value, 80)!r} is not owner/name",
                f"set it to the repository's owner and name (e.g. octo-org/my-agent), or {OUTSIDE}",
            )
        out["GITHUB_REPOSITORY"] = value
    for name in ("GITHUB_RUN_ID", "GITHUB_RUN_ATTEMPT"):
        if name in values:
            out[name] = _number(name, values[name].strip())
    for name, fits, what, fix in _SHAPES:
        if name in values:
            if not fits(values[name]):
                raise InputError(None, name, f"{clip(values[name], 80)!r} is not {what}", f"{fix}, or {OUTSIDE}")
            out[name] = values[name]
    for name in ("INPUT_GITHUB_TOKEN", "INPUT_GITHUB-TOKEN", "GITHUB_TOKEN"):
        if name in values:
            out[name] = check_token(name, values[name])
    return out
