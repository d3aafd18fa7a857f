"""A fake GitHub REST API on 127.0.0.1 whose routes and payloads follow tests/support/github_api/rest-api-slice.json
(GitHub's published REST description, the routes we call).

Every request our client sends is matched to a route of the slice and its JSON body validated against the route's
request schema; every response the fake sends is validated against the route's response schema. Faults are
injected per route: a status (with headers such as Retry-After) for the next N matching requests, optionally after the
request took effect (GitHub stored the comment, but the reply was a 502 or the connection dropped).

Identities follow GitHub: each token belongs to a user (a personal access token) or to an App installation
(GITHUB_TOKEN is `github-actions[bot]`'s; another App's token is `<slug>[bot]`'s). A comment's author is the
token's owner, `GET /user` answers only a user's token (403 for an installation token), and only a comment's
author may edit or delete it.

A pull request is a conversation too: people have a permission on the repository (`collaborators/{username}/
permission`, with GitHub's legacy mapping maintain → write, triage → read), comments get reactions, commits get
statuses, and the issue's timeline records what the server saw with the server's time (a force-push, a label
added) beside what it cannot time (an ordinary push shows only as `committed` events, dated by the committer).
Every body a comment had is kept in `comment_history`, so a test can read the comment's edits in order.
"""

from __future__ import annotations

import base64
import copy
import functools
import hashlib
import io
import json
import re
import socket
import threading
import zipfile
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, unquote, urlparse

import jsonschema

from tests.support.loopback import LoopbackHTTPServer

SLICE = Path(__file__).resolve().parent / "github_api" / "rest-api-slice.json"
SPEC = json.loads(SLICE.read_text())
ROUTES = [(re.compile("^" + re.sub(r"\{[^/]+\}", "([^/]+)", p) + "$"), p) for p in SPEC["paths"]]
# contents paths and git refs contain slashes; match them greedily
ROUTES = [
    (re.compile(r"^/repos/([^/]+)/([^/]+)/contents/(.+)$"), "/repos/{owner}/{repo}/contents/{path}"),
    (re.compile(r"^/repos/([^/]+)/([^/]+)/git/ref/(.+)$"), "/repos/{owner}/{repo}/git/ref/{ref}"),
    (re.compile(r"^/repos/([^/]+)/([^/]+)/git/refs/(.+)$"), "/repos/{owner}/{repo}/git/refs/{ref}"),
    *ROUTES,
]


def _nullable(schema: Any) -> Any:
    """OpenAPI 3.0's `nullable: true` → JSON Schema's type union, recursively; $refs resolved."""
    if isinstance(schema, dict):
        if "$ref" in schema:
            name = schema["$ref"].split("/")[-1]
            return _nullable(SPEC["components"]["schemas"][name])
        out = {k: _nullable(v) for k, v in schema.items() if k not in ("nullable", "example", "examples")}
        if schema.get("nullable"):
            out = {"anyOf": [out, {"type": "null"}]}
        return out
    if isinstance(schema, list):
        return [_nullable(s) for s in schema]
    return schema


def _response_schema(template: str, method: str, status: int) -> Any:
    responses = SPEC["paths"][template][method.lower()].get("responses", {})
    content = responses.get(str(status), {}).get("content", {}).get("application/json")
    return _nullable(content["schema"]) if content else None


def _request_schema(template: str, method: str) -> Any:
    body = SPEC["paths"][template][method.lower()].get("requestBody", {})
    schema = body.get("content", {}).get("application/json", {}).get("schema")
    return _nullable(schema) if schema else None


@functools.cache
def _validator(template: str, method: str, status: int | None) -> Any:
    """A validator built once per route: `jsonschema.validate` checks the (large, fixed) schema itself on every
    call, seconds per page of a timeline."""
    schema = _request_schema(template, method) if status is None else _response_schema(template, method, status)
    return None if schema is None else jsonschema.validators.validator_for(schema)(schema)


def _check(template: str, method: str, status: int | None, instance: Any) -> None:
    """`jsonschema.validate` with a cached validator: raises the best-matching error, as it does."""
    validator = _validator(template, method, status)
    error = None if validator is None else jsonschema.exceptions.best_match(validator.iter_errors(instance))
    if error is not None:
        raise error


def minimal(schema: Any) -> Any:
    """The smallest instance of a slice schema: required properties only, placeholder values by type."""
    schema = _nullable(schema)
    if "anyOf" in schema:
        return minimal(schema["anyOf"][0])
    if "allOf" in schema:
        merged: dict[str, Any] = {}
        for part in schema["allOf"]:
            merged.update(minimal(part))
        return merged
    kind = schema.get("type")
    if kind == "object" or "properties" in schema:
        return {name: minimal(schema["properties"][name]) for name in schema.get("required", [])}
    if kind == "array":
        return []
    if kind == "integer" or kind == "number":
        return 1
    if kind == "boolean":
        return False
    if schema.get("format") == "date-time":
        return "2026-11-20T10:00:00Z"
    if schema.get("format") == "uri":
        return "https://example.invalid/x"
    return schema.get("enum", ["x"])[0]


def user(login: str, kind: str = "User", user_id: int = 1) -> dict[str, Any]:
    """A `simple-user` as GitHub shows it on a comment (type `User` or `Bot`)."""
    return {
        "login": login,
        "id": user_id,
        "node_id": f"U{user_id}",
        "avatar_url": "https://a/u",
        "gravatar_id": "",
        "url": f"https://api/users/{login}",
        "html_url": f"https://g/{login}",
        "followers_url": "https://api/f",
        "following_url": "https://api/f",
        "gists_url": "https://api/g",
        "starred_url": "https://api/s",
        "subscriptions_url": "https://api/s",
        "organizations_url": "https://api/o",
        "repos_url": "https://api/r",
        "events_url": "https://api/e",
        "received_events_url": "https://api/re",
        "type": kind,
        "site_admin": False,
    }


USER = user("github-actions[bot]", "Bot", 41898282)  # the workflow's GITHUB_TOKEN


@dataclass
class Identity:
    """Who a token belongs to: `installation` tokens (GITHUB_TOKEN, an App's) cannot call `GET /user`."""

    user: dict[str, Any]
    installation: bool


# Tokens the tests use by name; any other token is the workflow's GITHUB_TOKEN.
IDENTITIES = {
    "ghp_userPat": Identity(user("octocat", "User", 583231), installation=False),
    "ghs_otherApp": Identity(user("eval-bot[bot]", "Bot", 9001), installation=True),
}
WORKFLOW_TOKEN = Identity(USER, installation=True)


@dataclass
class Fault:
    method: str
    pattern: str
    status: int
    times: int = 1
    headers: dict[str, str] = field(default_factory=dict)
    body: dict[str, Any] = field(default_factory=lambda: {"message": "Server Error"})
    after_effect: bool = False  # the request takes effect, then the reply is this status instead of the real one
    drop: bool = False  # the connection closes without any reply (after the effect when after_effect is set)


@dataclass
class State:
    files: dict[tuple[str, str], bytes] = field(default_factory=dict)  # (branch or commit sha, path) → bytes
    branches: dict[str, str] = field(default_factory=lambda: {"main": "a" * 40})  # branch → head sha
    runs: list[dict[str, Any]] = field(default_factory=list)
    artifacts: dict[int, dict[str, Any]] = field(default_factory=dict)  # id → artifact (with "_zip" bytes, "_run")
    faults: list[Fault] = field(default_factory=list)
    requests: list[dict[str, Any]] = field(default_factory=list)
    read_only_tokens: set[str] = field(default_factory=lambda: {"read-only-token"})
    comments: dict[int, list[dict[str, Any]]] = field(default_factory=dict)  # issue number → comments
    next_comment_id: int = 1000
    pulls: dict[int, dict[str, Any]] = field(default_factory=dict)
    check_runs: list[dict[str, Any]] = field(default_factory=list)
    schema_errors: list[str] = field(default_factory=list)
    identities: dict[str, Identity] = field(default_factory=lambda: dict(IDENTITIES))
    labels: dict[int, list[str]] = field(default_factory=dict)  # issue number → label names (as GitHub has them now)
    permissions: dict[str, str] = field(default_factory=dict)  # login → role; anyone else reads (a public repository)
    reactions: list[dict[str, Any]] = field(default_factory=list)
    statuses: list[dict[str, Any]] = field(default_factory=list)
    timeline: dict[int, list[dict[str, Any]]] = field(default_factory=dict)  # issue number → events, oldest first
    comment_history: dict[int, list[str]] = field(default_factory=dict)  # comment id → every body it had, in order
    git_objects: dict[str, dict[str, Any]] = field(default_factory=dict)  # Git Data API: sha → blob, tree or commit

    def identity(self, token: str) -> Identity:
        return self.identities.get(token, WORKFLOW_TOKEN)


class FakeGitHub:
    def __init__(self) -> None:
        self.state = State()
        state = self.state
        lock = threading.Lock()

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def _send(
                self,
                status: int,
                payload: Any = None,
                headers: dict[str, str] | None = None,
                raw: bytes | None = None,
                template: str | None = None,
                method: str = "GET",
            ) -> None:
                if template and payload is not None and status < 300:
                    try:
                        _check(template, method, status, payload)
                    except jsonschema.ValidationError as exc:
                        state.schema_errors.append(f"response {method} {template}: {exc.message}")
                body = raw if raw is not None else (json.dumps(payload).encode() if payload is not None else b"")
                self.send_response(status)
                self.send_header("content-type", "application/zip" if raw is not None else "application/json")
                self.send_header("content-length", str(len(body)))
                for key, value in (headers or {}).items():
                    self.send_header(key, value)
                self.end_headers()
                self.wfile.write(body)

            def _handle(self, method: str) -> None:
                parsed = urlparse(self.path)
                query = {k: v[0] for k, v in parse_qs(parsed.query).items()}
                length = int(self.headers.get("content-length") or 0)
                body = json.loads(self.rfile.read(length)) if length else None
                token = (self.headers.get("authorization") or "").removeprefix("Bearer ")
                with lock:
                    state.requests.append(
                        {"method": method, "path": parsed.path, "query": query, "body": body, "token": token}
                    )
                    if parsed.path.startswith("/blob/"):
                        artifact = state.artifacts[int(parsed.path.split("/")[-1])]
                        return self._send(200, raw=artifact["_zip"])
                    match = next(((rx.match(parsed.path), t) for rx, t in ROUTES if rx.match(parsed.path)), None)
                    if match is None or method.lower() not in SPEC["paths"][match[1]]:
                        return self._send(404, {"message": "Not Found"})
                    groups, template = match[0].groups(), match[1]
                    if body is not None:
                        try:
                            _check(template, method, None, body)
                        except jsonschema.ValidationError as exc:
                            state.schema_errors.append(f"request {method} {template}: {exc.message}")
                            return self._send(422, {"message": f"Invalid request: {exc.message}"})
                    fault = next(
                        (
                            f
                            for f in state.faults
                            if f.times > 0 and f.method == method and re.search(f.pattern, parsed.path)
                        ),
                        None,
                    )
                    if fault is not None:
                        fault.times -= 1
                    if fault is not None and not fault.after_effect:
                        return self._fail(fault)
                    if method != "GET" and token in state.read_only_tokens:
                        return self._send(403, {"message": "Resource not accessible by integration"})
                    status, payload, headers = route(method, template, groups, query, body, self.server_url, token)
                    if fault is not None:
                        return self._fail(fault)
                    return self._send(status, payload, headers, template=template, method=method)

            def _fail(self, fault: Fault) -> None:
                if fault.drop:
                    self.close_connection = True
                    self.connection.shutdown(socket.SHUT_RDWR)
                    return None
                return self._send(fault.status, fault.body, fault.headers)

            def do_GET(self):
                self._handle("GET")

            def do_PUT(self):
                self._handle("PUT")

            def do_POST(self):
                self._handle("POST")

            def do_PATCH(self):
                self._handle("PATCH")

            def do_DELETE(self):
                self._handle("DELETE")

            @property
            def server_url(self) -> str:
                host, port = self.server.server_address[:2]
                return f"http://{host}:{port}"

        def content_payload(branch: str, path: str, data: bytes, base: str) -> dict[str, Any]:
            sha = hashlib.sha1(data).hexdigest()
            url = f"{base}/repos/o/r/contents/{path}?ref={branch}"
            return {
                "type": "file",
                "encoding": "base64",
                "size": len(data),
                "name": path.split("/")[-1],
                "path": path,
                "content": base64.b64encode(data).decode(),
                "sha": sha,
                "url": url,
                "git_url": url,
                "html_url": url,
                "download_url": url,
                "_links": {"git": url, "html": url, "self": url},
            }

        def make_comment(
            number: int,
            text: str,
            base: str,
            user: dict[str, Any] | None = None,
            created_at: str = "2026-11-22T10:00:00Z",
        ) -> dict[str, Any]:
            """A comment as `user` (default: the workflow's GITHUB_TOKEN) would post it."""
            state.next_comment_id += 1
            comment = {
                "id": state.next_comment_id,
                "node_id": f"IC{state.next_comment_id}",
                "body": text,
                "url": f"{base}/repos/o/r/issues/comments/{state.next_comment_id}",
                "html_url": f"https://github.com/o/r/pull/{number}#issuecomment-{state.next_comment_id}",
                "issue_url": f"{base}/repos/o/r/issues/{number}",
                "author_association": "NONE",
                "user": user or USER,
                "created_at": created_at,
                "updated_at": created_at,
            }
            state.comments.setdefault(number, []).append(comment)
            state.comment_history[comment["id"]] = [text]
            return comment

        self.make_comment = make_comment

        def git_commit(sha: str, base: str) -> dict[str, Any] | None:
            """A commit object: one made through the API, or any head GitHub knows (a branch's, a pull request's),
            whose tree is named after it."""
            made = state.git_objects.get(sha)
            known = sha in state.branches.values() or any(p["head"]["sha"] == sha for p in state.pulls.values())
            if made is None and not known:
                return None
            made = made or {"type": "commit", "tree": hashlib.sha1(b"tree " + sha.encode()).hexdigest(), "parents": []}
            url = f"{base}/repos/o/r/git/commits/{sha}"
            person = {"name": "Committer", "email": "c@example.com", "date": "2026-11-22T10:00:00Z"}
            return {
                "sha": sha,
                "node_id": f"C_{sha[:8]}",
                "url": url,
                "html_url": f"https://github.com/o/r/commit/{sha}",
                "author": person,
                "committer": person,
                "message": made.get("message", "a commit"),
                "tree": {"sha": made["tree"], "url": f"{base}/repos/o/r/git/trees/{made['tree']}"},
                "parents": [
                    {
                        "sha": p,
                        "url": f"{base}/repos/o/r/git/commits/{p}",
                        "html_url": f"https://github.com/o/r/commit/{p}",
                    }
                    for p in made["parents"]
                ],
                "verification": {"verified": False, "reason": "unsigned", "signature": None, "payload": None},
            }

        def descends(sha: str, ancestor: str) -> bool:
            seen, todo = set(), [sha]
            while todo:
                current = todo.pop()
                if current == ancestor:
                    return True
                if current not in seen:
                    seen.add(current)
                    todo += state.git_objects.get(current, {}).get("parents", [])
            return False

        def git_data(method, template, groups, body, base):
            """Blobs, trees and commits are content-addressed; a ref moves only as a fast-forward unless forced, as
            GitHub's `PATCH /git/refs/{ref}` does (422 "Update is not a fast forward")."""
            if template == "/repos/{owner}/{repo}/git/blobs":
                data = (
                    base64.b64decode(body["content"]) if body.get("encoding") == "base64" else body["content"].encode()
                )
                sha = hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()
                state.git_objects[sha] = {"type": "blob", "data": data}
                return 201, {"sha": sha, "url": f"{base}/repos/o/r/git/blobs/{sha}"}, None
            if template == "/repos/{owner}/{repo}/git/trees":
                for entry in body["tree"]:
                    if entry.get("sha") and state.git_objects.get(entry["sha"], {}).get("type") != "blob":
                        return 422, {"message": "Invalid tree info", "documentation_url": "x"}, None
                entries = sorted((e["path"], e["mode"], e["type"], e["sha"]) for e in body["tree"])
                sha = hashlib.sha1(json.dumps([body.get("base_tree"), entries]).encode()).hexdigest()
                state.git_objects[sha] = {"type": "tree", "base": body.get("base_tree"), "entries": entries}
                tree = [{"path": p, "mode": m, "type": t, "sha": s, "url": f"{base}/b/{s}"} for p, m, t, s in entries]
                return (
                    201,
                    {"sha": sha, "url": f"{base}/repos/o/r/git/trees/{sha}", "tree": tree, "truncated": False},
                    None,
                )
            if template == "/repos/{owner}/{repo}/git/commits" and method == "POST":
                if state.git_objects.get(body["tree"], {}).get("type") != "tree":
                    return 422, {"message": "Tree SHA does not exist", "documentation_url": "x"}, None
                parents = body.get("parents", [])
                if any(git_commit(p, base) is None for p in parents):
                    return 422, {"message": "Parent SHA does not exist or is not a commit object"}, None
                sha = hashlib.sha1(json.dumps([body["tree"], parents, body["message"]]).encode()).hexdigest()
                state.git_objects[sha] = {"type": "commit", "tree": body["tree"], "parents": parents, **body}
                return 201, git_commit(sha, base), None
            if template == "/repos/{owner}/{repo}/git/commits/{commit_sha}":
                found = git_commit(groups[2], base)
                return (200, found, None) if found else (404, {"message": "Not Found"}, None)
            if template == "/repos/{owner}/{repo}/git/refs/{ref}":
                name = unquote(groups[2]).removeprefix("heads/")
                heads = [p["head"]["sha"] for p in state.pulls.values() if p["head"]["ref"] == name]
                current = heads[0] if heads else state.branches.get(name)  # a pull request's branch is its head
                if current is None:
                    return 422, {"message": "Reference does not exist"}, None
                if body["sha"] not in state.git_objects:
                    return 422, {"message": "Object does not exist"}, None
                if not body.get("force") and not descends(body["sha"], current):
                    return 422, {"message": "Update is not a fast forward"}, None
                state.branches[name] = body["sha"]
                for pull in state.pulls.values():  # the pull request's head follows its branch
                    if pull["head"]["ref"] == name:
                        pull["head"]["sha"] = body["sha"]
                url = f"{base}/repos/o/r/git/refs/heads/{name}"
                return (
                    200,
                    {
                        "ref": f"refs/heads/{name}",
                        "node_id": "REF",
                        "url": url,
                        "object": {"type": "commit", "sha": body["sha"], "url": f"{base}/c"},
                    },
                    None,
                )
            return None

        self.git_commit = git_commit

        def route(method, template, groups, query, body, base, token):
            identity = state.identity(token)
            if template == "/user":
                if identity.installation:
                    return (
                        403,
                        {
                            "message": "Resource not accessible by integration",
                            "documentation_url": "https://docs.github.com/rest/users/users#get-the-authenticated-user",
                        },
                        None,
                    )
                return 200, identity.user, None
            if template == "/repos/{owner}/{repo}/issues/{issue_number}/labels" and method == "GET":
                names = state.labels.get(int(groups[2]), [])
                return (
                    200,
                    [
                        {
                            "id": i + 1,
                            "node_id": f"L{i + 1}",
                            "url": f"{base}/repos/o/r/labels/{i + 1}",
                            "name": name,
                            "description": None,
                            "color": "ededed",
                            "default": False,
                        }
                        for i, name in enumerate(names)
                    ],
                    None,
                )
            if template == "/repos/{owner}/{repo}/contents/{path}":
                path = unquote(groups[2])
                if method == "GET":
                    # `ref` names a branch or a commit: files stored under a sha are that commit's tree
                    branch = query.get("ref", "main")
                    if branch not in state.branches and not any(ref == branch for ref, _ in state.files):
                        return 404, {"message": f"No commit found for the ref {branch}"}, None
                    data = state.files.get((branch, path))
                    return (
                        (200, content_payload(branch, path, data, base), None)
                        if data is not None
                        else (404, {"message": "Not Found"}, None)
                    )
                branch = body.get("branch", "main")
                if branch not in state.branches:
                    return 404, {"message": f"Branch {branch} not found"}, None
                existing = state.files.get((branch, path))
                if existing is not None and body.get("sha") != hashlib.sha1(existing).hexdigest():
                    return 409, {"message": f"{path} does not match {body.get('sha')}"}, None
                if method == "DELETE":
                    if existing is None:
                        return 404, {"message": "Not Found"}, None
                    del state.files[(branch, path)]
                    commit_sha = hashlib.sha1(b"delete " + path.encode()).hexdigest()
                    state.branches[branch] = commit_sha
                    return 200, {"content": None, "commit": {"sha": commit_sha, "message": body["message"]}}, None
                data = base64.b64decode(body["content"])
                state.files[(branch, path)] = data
                commit_sha = hashlib.sha1(data + path.encode()).hexdigest()
                state.branches[branch] = commit_sha
                payload = {
                    "content": {
                        k: v
                        for k, v in content_payload(branch, path, data, base).items()
                        if k not in ("content", "encoding")
                    },
                    "commit": {"sha": commit_sha, "message": body["message"]},
                }
                return (200 if existing is not None else 201), payload, None
            if template == "/repos/{owner}/{repo}/issues/{issue_number}/comments":
                number = int(groups[2])
                comments = state.comments.setdefault(number, [])
                if method == "POST":
                    return 201, make_comment(number, body["body"], base, identity.user), None
                per_page, page = int(query.get("per_page", 30)), int(query.get("page", 1))
                chunk = comments[(page - 1) * per_page : page * per_page]
                headers = {}
                if page * per_page < len(comments):
                    headers["Link"] = (
                        f'<{base}/repos/o/r/issues/{number}/comments?per_page={per_page}&page={page + 1}>; rel="next"'
                    )
                return 200, chunk, headers
            if template == "/repos/{owner}/{repo}/issues/comments/{comment_id}":
                comment = next((c for cs in state.comments.values() for c in cs if c["id"] == int(groups[2])), None)
                if comment is None:
                    return 404, {"message": "Not Found"}, None
                if method in ("PATCH", "DELETE") and comment["user"]["login"] != identity.user["login"]:
                    return 403, {"message": "Must have admin rights to Repository."}, None
                if method == "DELETE":
                    for comments in state.comments.values():
                        if comment in comments:
                            comments.remove(comment)
                    return 204, None, None
                if method == "PATCH":
                    comment["body"] = body["body"]
                    comment["updated_at"] = "2026-11-22T12:00:00Z"
                    state.comment_history.setdefault(comment["id"], []).append(body["body"])
                return 200, comment, None
            if template == "/repos/{owner}/{repo}/issues/comments/{comment_id}/reactions":
                comment = next((c for cs in state.comments.values() for c in cs if c["id"] == int(groups[2])), None)
                if comment is None:
                    return 404, {"message": "Not Found"}, None
                login = identity.user["login"]
                existing = next(
                    (
                        r
                        for r in state.reactions
                        if r["_comment"] == comment["id"]
                        and r["content"] == body["content"]
                        and r["user"]["login"] == login
                    ),
                    None,
                )
                if existing is not None:  # GitHub answers 200 with the reaction that is already there
                    return 200, {k: v for k, v in existing.items() if not k.startswith("_")}, None
                reaction = {
                    "id": len(state.reactions) + 1,
                    "node_id": f"R{len(state.reactions) + 1}",
                    "user": identity.user,
                    "content": body["content"],
                    "created_at": "2026-11-22T10:00:01Z",
                    "_comment": comment["id"],
                }
                state.reactions.append(reaction)
                return 201, {k: v for k, v in reaction.items() if not k.startswith("_")}, None
            if template == "/repos/{owner}/{repo}/collaborators/{username}/permission":
                login = unquote(groups[2])
                role = state.permissions.get(login, "read")
                collaborator = {**user(login), "role_name": role}
                # GitHub's legacy `permission` maps the maintain role to write and triage to read
                legacy = {"maintain": "write", "triage": "read"}.get(role, role)
                return 200, {"permission": legacy, "role_name": role, "user": collaborator}, None
            if template == "/repos/{owner}/{repo}/statuses/{sha}":
                status = {
                    "id": len(state.statuses) + 1,
                    "node_id": f"S{len(state.statuses) + 1}",
                    "url": f"{base}/repos/o/r/statuses/{groups[2]}",
                    "avatar_url": None,
                    "state": body["state"],
                    "description": body.get("description", ""),
                    "target_url": body.get("target_url", ""),
                    "context": body.get("context", "default"),
                    "created_at": "2026-11-22T10:00:02Z",
                    "updated_at": "2026-11-22T10:00:02Z",
                    "creator": identity.user,
                    "_sha": groups[2],
                }
                state.statuses.append(status)
                return 201, {k: v for k, v in status.items() if not k.startswith("_")}, None
            if template in (
                "/repos/{owner}/{repo}/issues/{issue_number}/timeline",
                "/repos/{owner}/{repo}/issues/{issue_number}/events",
            ):
                events = state.timeline.get(int(groups[2]), [])
                if template.endswith("/events"):  # the events API has no commits and no comments
                    events = [e for e in events if "actor" in e]
                per_page, page = int(query.get("per_page", 30)), int(query.get("page", 1))
                chunk = events[(page - 1) * per_page : page * per_page]
                headers = {}
                if page * per_page < len(events):
                    kind = template.rsplit("/", 1)[1]
                    headers["Link"] = (
                        f'<{base}/repos/o/r/issues/{groups[2]}/{kind}?per_page={per_page}&page={page + 1}>; rel="next"'
                    )
                return 200, chunk, headers
            if template == "/repos/{owner}/{repo}/check-runs" and method == "POST":
                run = {
                    **minimal(SPEC["components"]["schemas"]["check-run"]),
                    "id": len(state.check_runs) + 1,
                    "name": body["name"],
                    "head_sha": body["head_sha"],
                    "status": body.get("status", "queued"),
                    "conclusion": body.get("conclusion"),
                    "html_url": f"https://github.com/o/r/runs/{len(state.check_runs) + 1}",
                }
                run["output"] = {
                    **run.get("output", {}),
                    "title": body.get("output", {}).get("title"),
                    "summary": body.get("output", {}).get("summary"),
                }
                state.check_runs.append(run)
                return 201, run, None
            if template == "/repos/{owner}/{repo}/pulls/{pull_number}":
                pull = state.pulls.get(int(groups[2]))
                return (200, pull, None) if pull else (404, {"message": "Not Found"}, None)
            if template == "/repos/{owner}/{repo}/git/ref/{ref}":
                ref = unquote(groups[2]).removeprefix("heads/")
                if ref not in state.branches:
                    return 404, {"message": "Not Found"}, None
                return (
                    200,
                    {
                        "ref": f"refs/heads/{ref}",
                        "node_id": "REF",
                        "url": f"{base}/r",
                        "object": {"type": "commit", "sha": state.branches[ref], "url": f"{base}/c"},
                    },
                    None,
                )
            if template.startswith("/repos/{owner}/{repo}/git/") and template != "/repos/{owner}/{repo}/git/ref/{ref}":
                handled = git_data(method, template, groups, body, base)
                if handled is not None:
                    return handled
            if template == "/repos/{owner}/{repo}/git/refs":
                name = body["ref"].removeprefix("refs/heads/")
                if name in state.branches:
                    return 422, {"message": "Reference already exists"}, None
                state.branches[name] = body["sha"]
                return (
                    201,
                    {
                        "ref": body["ref"],
                        "node_id": "REF",
                        "url": f"{base}/r",
                        "object": {"type": "commit", "sha": body["sha"], "url": f"{base}/c"},
                    },
                    None,
                )
            if template in (
                "/repos/{owner}/{repo}/actions/runs",
                "/repos/{owner}/{repo}/actions/workflows/{workflow_id}/runs",
            ):
                runs = [
                    r
                    for r in state.runs
                    if (not query.get("branch") or r["head_branch"] == query["branch"])
                    and (
                        not query.get("status") or r["conclusion"] == query["status"] or r["status"] == query["status"]
                    )
                    and (not query.get("event") or r["event"] == query["event"])
                    and (
                        template.endswith("/actions/runs")
                        or str(r["workflow_id"]) == groups[2]
                        or r["_workflow_file"] == groups[2]
                    )
                ]
                runs = sorted(runs, key=lambda r: r["created_at"], reverse=True)
                return (
                    200,
                    {
                        "total_count": len(runs),
                        "workflow_runs": [{k: v for k, v in r.items() if not k.startswith("_")} for r in runs],
                    },
                    None,
                )
            if template == "/repos/{owner}/{repo}/actions/runs/{run_id}/artifacts":
                arts = [a for a in state.artifacts.values() if str(a["_run"]) == groups[2]]
                return (
                    200,
                    {
                        "total_count": len(arts),
                        "artifacts": [{k: v for k, v in a.items() if not k.startswith("_")} for a in arts],
                    },
                    None,
                )
            if template == "/repos/{owner}/{repo}/actions/artifacts/{artifact_id}/{archive_format}":
                artifact = state.artifacts.get(int(groups[2]))
                if artifact is None or artifact["expired"]:
                    return (
                        410 if artifact else 404,
                        {"message": "Artifact has expired" if artifact else "Not Found"},
                        None,
                    )
                return 302, None, {"Location": f"{base}/blob/{artifact['id']}"}
            return 404, {"message": "Not Found"}, None

        self.server = LoopbackHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> FakeGitHub:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()

    # helpers for tests

    def add_run(
        self,
        run_id: int,
        head_sha: str,
        created_at: str,
        *,
        branch: str = "main",
        conclusion: str = "success",
        event: str = "push",
        workflow: str = "eval.yml",
    ) -> dict[str, Any]:
        repo = {
            **minimal(SPEC["components"]["schemas"]["minimal-repository"]),
            "name": "r",
            "full_name": "o/r",
            "owner": USER,
        }
        run = {
            "id": run_id,
            "node_id": f"RUN{run_id}",
            "head_branch": branch,
            "run_number": run_id,
            "event": event,
            "status": "completed",
            "conclusion": conclusion,
            "head_sha": head_sha,
            "workflow_id": 7,
            "url": f"{self.url}/runs/{run_id}",
            "html_url": f"https://g/runs/{run_id}",
            "created_at": created_at,
            "updated_at": created_at,
            "head_commit": minimal(SPEC["components"]["schemas"]["simple-commit"]),
            "head_repository": repo,
            "repository": repo,
            "jobs_url": "https://api/j",
            "logs_url": "https://api/l",
            "check_suite_url": "https://api/c",
            "cancel_url": "https://api/x",
            "rerun_url": "https://api/y",
            "artifacts_url": "https://api/a",
            "workflow_url": "https://api/w",
            "pull_requests": [],
            "_workflow_file": workflow,
        }
        self.state.runs.append(run)
        return run

    def add_artifact(
        self, artifact_id: int, run_id: int, name: str, files: dict[str, bytes], *, expired: bool = False
    ) -> None:
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w") as archive:
            for file_name, data in files.items():
                archive.writestr(file_name, data)
        self.state.artifacts[artifact_id] = {
            "id": artifact_id,
            "node_id": f"A{artifact_id}",
            "name": name,
            "size_in_bytes": len(buffer.getvalue()),
            "url": f"{self.url}/a/{artifact_id}",
            "archive_download_url": f"{self.url}/repos/o/r/actions/artifacts/{artifact_id}/zip",
            "expired": expired,
            "created_at": "2026-11-20T10:00:00Z",
            "expires_at": "2027-02-18T10:00:00Z",
            "updated_at": "2026-11-20T10:00:00Z",
            "_run": run_id,
            "_zip": buffer.getvalue(),
        }

    def identify(self, token: str, login: str, *, kind: str = "User", installation: bool = False) -> None:
        """Who `token` belongs to: a user's token (`installation=False`) or an App's (`<slug>[bot]`, type Bot)."""
        self.state.identities[token] = Identity(user(login, kind, 10_000 + len(self.state.identities)), installation)

    def add_pull(
        self, number: int, head_sha: str, *, base_sha: str = "b" * 40, base_ref: str = "main", state: str = "open"
    ) -> None:
        pull = minimal(SPEC["components"]["schemas"]["pull-request"])
        pull["number"] = number
        pull["state"] = state
        pull["head"] = {**pull["head"], "sha": head_sha, "ref": "feature"}
        pull["base"] = {**pull["base"], "sha": base_sha, "ref": base_ref}
        self.state.pulls[number] = pull

    def comment_as(self, number: int, text: str, login: str, *, kind: str = "User", created_at: str) -> dict[str, Any]:
        """A comment someone wrote on the pull request; GitHub stamps it with the server's time."""
        return self.make_comment(number, text, self.url, user(login, kind, 20_000 + len(login)), created_at)

    def _event(self, number: int, event: str, actor: str, at: str, **extra: Any) -> dict[str, Any]:
        events = self.state.timeline.setdefault(number, [])
        record = {
            "id": 5000 + len(events),
            "node_id": f"E{len(events)}",
            "url": f"{self.url}/repos/o/r/issues/events/{5000 + len(events)}",
            "actor": user(actor, "User", 30_000 + len(actor)),
            "event": event,
            "commit_id": None,
            "commit_url": None,
            "created_at": at,  # the server's time
            "performed_via_github_app": None,
            **extra,
        }
        events.append(record)
        return record

    def push(self, number: int, sha: str, *, force_at: str | None = None, commit_date: str = "2026-11-01T00:00:00Z"):
        """The pull request's head moves to `sha`. An ordinary push shows in the timeline only as a `committed`
        event dated by the committer (anything they like); a force-push is a `head_ref_force_pushed` event at
        `force_at`, the server's time."""
        self.state.pulls[number]["head"]["sha"] = sha
        if force_at is not None:
            self._event(number, "head_ref_force_pushed", "pusher", force_at, commit_id=sha)
            return
        person = {"name": "Pusher", "email": "p@example.com", "date": commit_date}
        url = f"{self.url}/repos/o/r/git/commits/{sha}"
        self.state.timeline.setdefault(number, []).append(
            {
                "event": "committed",
                "sha": sha,
                "node_id": f"C{sha[:8]}",
                "url": url,
                "html_url": f"https://github.com/o/r/commit/{sha}",
                "author": person,
                "committer": person,
                "tree": {"sha": "f" * 40, "url": url},
                "message": "a commit",
                "parents": [],
                "verification": {
                    "verified": False,
                    "reason": "unsigned",
                    "signature": None,
                    "payload": None,
                    "verified_at": None,
                },
            }
        )

    def add_label(self, number: int, name: str, actor: str, at: str) -> None:
        """`actor` adds the label at `at` (the server's time): the labels now, and a `labeled` event."""
        self.state.labels.setdefault(number, []).append(name)
        self._event(number, "labeled", actor, at, label={"name": name, "color": "ededed"})

    def history(self, comment_id: int) -> list[str]:
        """Every body the comment had, oldest first (GitHub keeps an edit history too)."""
        return list(self.state.comment_history.get(comment_id, []))

    def file(self, branch: str, path: str) -> Any:
        data = self.state.files.get((branch, path))
        return None if data is None else json.loads(data)

    def fault(self, method: str, pattern: str, status: int, times: int = 1, **kwargs: Any) -> None:
        self.state.faults.append(Fault(method, pattern, status, times, **kwargs))

    def calls(self, method: str | None = None, pattern: str = "") -> list[dict[str, Any]]:
        return [
            copy.deepcopy(r)
            for r in self.state.requests
            if (method is None or r["method"] == method) and re.search(pattern, r["path"])
        ]
