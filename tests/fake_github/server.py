"""A fake GitHub REST API on 127.0.0.1 keeping state, checking every exchange against GitHub's description.

    with FakeGitHub() as github:             # http://127.0.0.1:<port>, or .../api/v3 with enterprise=True
        github.add_token("t0k3n", issues="write")
        ... point PyGithub at github.base_url ...
        assert github.violations == []       # the `fake_github` fixture asserts this for every test

It keeps issues, comments, labels, reactions, refs, file contents, pull requests and artifacts. Every request
the client sends and every response the fake returns is validated against GitHub's REST description
(openapi-core); a violation is recorded, and a request violation is answered like GitHub would (422).

Tokens have fine-grained permissions and a kind (`add_token(..., kind=)`): a workflow's GITHUB_TOKEN (the
default), a GitHub App's installation token, or a person's, and a login (`github-actions[bot]` unless told
otherwise): what it creates is authored by that login, and GraphQL's `viewer { login }` (the one GraphQL
query served, outside the REST description) names it. A workflow's token may not open pull requests
while the repository's `can_approve_pull_request_reviews` setting is off, as on GitHub (403).

Adjustable behaviours, to test what a client does when GitHub misbehaves:

- `search_lag`: seconds before a new or edited issue shows up in search (live: seconds to ~10 minutes);
- `rate`: the primary rate limit (1,000 an hour like a GITHUB_TOKEN); spent, it answers 403 with headers;
- `content_limit`: GitHub's secondary limit on content creation (`secondary`: 80 POST/PATCH/PUT a minute,
  500 an hour); over it, 403 with `retry-after`;
- `fail(...)`: answer the next matching request(s) with a status (403/429 with `retry-after`, 5xx, 409, 410,
  422, ...), before or after applying it (`applied=True`: the change happens, the answer is lost);
- pagination like GitHub's (`per_page` up to 100, `Link` headers); conditional requests (`ETag`, 304).

The server stops by itself after `lifetime` seconds.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import secrets
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any, Literal, TypeVar
from urllib.parse import urlencode

from werkzeug.exceptions import MethodNotAllowed, NotFound
from werkzeug.routing import Map, Rule
from werkzeug.serving import WSGIRequestHandler, make_server
from werkzeug.wrappers import Request, Response

from .secondary import MESSAGE as SECONDARY_LIMIT_MESSAGE
from .secondary import ContentLimit, retry_after
from .state import BOT_LOGIN, Comment, Label, Pull, Reaction, Repo, State, git_sha, ts
from .validation import request_violations, response_violations

DOCS = "https://docs.github.com/rest"
REACTIONS = {"+1", "-1", "laugh", "confused", "heart", "hooray", "rocket", "eyes"}
# a collaborator's repository roles, least first ("Repository roles for an organization"), and the legacy
# base role the collaborator-permission endpoint gives as `permission` for each
ROLES = ("read", "triage", "write", "maintain", "admin")
LEGACY_PERMISSIONS = dict(zip(ROLES, ("read", "read", "write", "write", "admin"), strict=True))

# operation id -> (permission, level) a fine-grained token needs
PERMISSIONS = {
    "repos/get": ("metadata", "read"),
    "rate-limit/get": (None, None),
    "search/issues-and-pull-requests": (None, None),
    "repos/get-collaborator-permission-level": ("metadata", "read"),
    "git/get-ref": ("contents", "read"),
    "git/create-ref": ("contents", "write"),
    "git/update-ref": ("contents", "write"),
    "repos/get-content": ("contents", "read"),
    "repos/create-or-update-file-contents": ("contents", "write"),
    "pulls/create": ("pull_requests", "write"),
    "pulls/list": ("pull_requests", "read"),
    "actions/list-artifacts-for-repo": ("actions", "read"),
    "actions/get-artifact": ("actions", "read"),
    "actions/download-artifact": ("actions", "read"),
}
_READ_ONLY = {"GET"}

R = "/repos/<owner>/<repo>"
ROUTES = [
    ("repos/get", "GET", R),
    ("rate-limit/get", "GET", "/rate_limit"),
    ("search/issues-and-pull-requests", "GET", "/search/issues"),
    ("issues/list-for-repo", "GET", f"{R}/issues"),
    ("issues/create", "POST", f"{R}/issues"),
    ("issues/get-comment", "GET", f"{R}/issues/comments/<int:comment_id>"),
    ("issues/update-comment", "PATCH", f"{R}/issues/comments/<int:comment_id>"),
    ("reactions/list-for-issue-comment", "GET", f"{R}/issues/comments/<int:comment_id>/reactions"),
    ("reactions/create-for-issue-comment", "POST", f"{R}/issues/comments/<int:comment_id>/reactions"),
    ("issues/get", "GET", f"{R}/issues/<int:issue_number>"),
    ("issues/update", "PATCH", f"{R}/issues/<int:issue_number>"),
    ("issues/list-comments", "GET", f"{R}/issues/<int:issue_number>/comments"),
    ("issues/create-comment", "POST", f"{R}/issues/<int:issue_number>/comments"),
    ("issues/add-labels", "POST", f"{R}/issues/<int:issue_number>/labels"),
    ("issues/remove-label", "DELETE", f"{R}/issues/<int:issue_number>/labels/<name>"),
    ("issues/list-labels-for-repo", "GET", f"{R}/labels"),
    ("issues/create-label", "POST", f"{R}/labels"),
    ("issues/get-label", "GET", f"{R}/labels/<name>"),
    ("repos/get-collaborator-permission-level", "GET", f"{R}/collaborators/<username>/permission"),
    ("git/get-ref", "GET", f"{R}/git/ref/<path:ref>"),
    ("git/create-ref", "POST", f"{R}/git/refs"),
    ("git/update-ref", "PATCH", f"{R}/git/refs/<path:ref>"),
    ("repos/get-content", "GET", f"{R}/contents/<path:path>"),
    ("repos/create-or-update-file-contents", "PUT", f"{R}/contents/<path:path>"),
    ("pulls/list", "GET", f"{R}/pulls"),
    ("pulls/create", "POST", f"{R}/pulls"),
    ("actions/list-artifacts-for-repo", "GET", f"{R}/actions/artifacts"),
    ("actions/get-artifact", "GET", f"{R}/actions/artifacts/<int:artifact_id>"),
    ("actions/download-artifact", "GET", f"{R}/actions/artifacts/<int:artifact_id>/<archive_format>"),
]


class _QuietHandler(WSGIRequestHandler):
    def log_request(self, code: int | str = "-", size: int | str = "-") -> None:
        pass  # the exchanges are recorded in `FakeGitHub.exchanges`


class ApiError(Exception):
    """An answer GitHub gives instead of the resource."""

    def __init__(
        self, status: int, message: str, headers: dict[str, str] | None = None, **extra: Any
    ) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.headers = headers or {}
        self.extra = extra


T = TypeVar("T")


def found(thing: T | None) -> T:
    """The resource asked for, or GitHub's 404 when there is none."""
    if thing is None:
        raise ApiError(404, "Not Found")
    return thing


def invalid(**error: Any) -> ApiError:
    """GitHub's 422 for a request it understood but refuses, with the one entry of its `errors`."""
    return ApiError(422, "Validation Failed", errors=[error])


def check_body_length(text: str, resource: str) -> None:
    if len(text) > 65_536:
        raise invalid(
            resource=resource,
            field="body",
            code="custom",
            message="body is too long (maximum is 65536 characters)",
        )


# Who a token belongs to, where GitHub treats them differently: a workflow's GITHUB_TOKEN (`workflow`), a
# GitHub App's installation token (`app`), a person's token (`user`).
TokenKind = Literal["workflow", "app", "user"]
# GitHub's answer to commenting on a locked conversation without write access (probot/stale#25), and to
# reading a deleted issue (REST "Get an issue" documents the 410, not its message)
ISSUE_LOCKED = "Unable to create comment because issue is locked."
LOCKING_DOCS = (
    "https://docs.github.com/communities/moderating-comments-and-conversations/locking-conversations"
)
ISSUE_DELETED = "This issue was deleted"
# GitHub's answer to a workflow's GITHUB_TOKEN opening a pull request while the repository does not allow it
# (quoted in peter-evans/create-pull-request#1175 and #3979, googleapis/release-please-action#767).
ACTIONS_MAY_NOT_OPEN = "GitHub Actions is not permitted to create or approve pull requests."
PULLS_CREATE_DOCS = "https://docs.github.com/rest/pulls/pulls#create-a-pull-request"
# GitHub's answer to `draft: true` where the repository has no draft pull requests (a private repository on
# GitHub Free or Pro; see `Repo.drafts_allowed`), as quoted in SWE-agent/SWE-agent#179 and cli/cli#520.
DRAFTS_NOT_SUPPORTED = "Draft pull requests are not supported in this repository."


@dataclass
class Token:
    login: str = BOT_LOGIN
    permissions: dict[str, str] = field(default_factory=dict)
    kind: TokenKind = "workflow"


@dataclass
class Fault:
    """Answer matching requests with `status` instead of the real answer."""

    status: int
    operation: str | None = None  # an operation id; None matches any request
    times: int = 1
    skip: int = 0  # let this many matching requests through first
    applied: bool = False  # apply the request first (its answer is what gets lost)
    message: str = "Server Error"
    headers: dict[str, str] = field(default_factory=dict)

    def matches(self, operation: str) -> bool:
        return self.times > 0 and self.operation in (None, operation)


@dataclass
class RateLimit:
    limit: int = 1000
    remaining: int = 1000
    reset: int = 0  # epoch seconds; set at start

    @property
    def used(self) -> int:
        return self.limit - self.remaining


@dataclass
class Exchange:
    operation: str
    method: str
    path: str
    query: dict[str, str]
    status: int
    request_json: Any = None


class FakeGitHub:
    def __init__(
        self,
        *,
        repository: str = "octo/app",
        enterprise: bool = False,
        lifetime: float = 120.0,
        validate: bool = True,
        clock: Callable[[], datetime] | None = None,
    ) -> None:
        self._server = make_server("127.0.0.1", 0, self._wsgi, threaded=True, request_handler=_QuietHandler)
        self.port = self._server.server_port
        self.prefix = "/api/v3" if enterprise else ""
        self.base_url = f"http://127.0.0.1:{self.port}{self.prefix}"
        self.clock = clock or (lambda: datetime.now(UTC))
        self.state = State(self.base_url, self._now)
        self.repo: Repo = self.state.add_repo(repository)
        self.tokens: dict[str, Token] = {}
        self.rate = RateLimit(reset=int(self._now().timestamp()) + 3600)
        # the secondary limit on content creation (80 a minute, 500 an hour); None switches it off
        self.content_limit: ContentLimit | None = ContentLimit()
        self.search_lag = timedelta(0)
        self.faults: list[Fault] = []
        self.exchanges: list[Exchange] = []
        self.violations: list[str] = []
        self.validate = validate
        self.signed_url_ttl = timedelta(minutes=1)
        self._signed: dict[str, tuple[int, datetime]] = {}
        self._lock = threading.Lock()
        self._map = Map(
            [Rule(path, endpoint=operation, methods=[method]) for operation, method, path in ROUTES]
            + [Rule("/_blobs/<token>", endpoint="blob", methods=["GET"])]
        )
        self._handlers: dict[str, Callable[..., Any]] = {
            operation: getattr(self, "_op_" + re.sub(r"[^a-z]+", "_", operation))
            for operation, _, _ in ROUTES
        }
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.05,), daemon=True)
        self._timer = threading.Timer(lifetime, self.stop)
        self._timer.daemon = True

    # --- lifecycle ----------------------------------------------------------------------------
    def start(self) -> FakeGitHub:
        if self._thread.is_alive():
            return self
        self._thread.start()
        self._timer.start()
        return self

    def stop(self) -> None:
        self._timer.cancel()
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> FakeGitHub:
        return self.start()

    def __exit__(self, *_: object) -> None:
        self.stop()

    # --- test controls ------------------------------------------------------------------------
    def add_token(
        self, token: str, login: str = BOT_LOGIN, *, kind: TokenKind = "workflow", **permissions: str
    ) -> str:
        """A token with these fine-grained permissions; a workflow's GITHUB_TOKEN unless `kind` says not."""
        granted = {"metadata": "read", **permissions}
        self.tokens[token] = Token(login, granted, kind)
        return token

    def fail(self, status: int, operation: str | None = None, **options: Any) -> Fault:
        fault = Fault(status=status, operation=operation, **options)
        self.faults.append(fault)
        return fault

    def requests(self, operation: str | None = None) -> list[Exchange]:
        return [e for e in self.exchanges if operation in (None, e.operation)]

    def issues(self) -> list[Any]:
        return sorted((i for i in self.repo.issues.values() if not i.pull), key=lambda i: i.number)

    def _now(self) -> datetime:
        return self.clock()

    # --- the WSGI app -------------------------------------------------------------------------
    def _wsgi(self, environ: dict, start_response: Callable) -> Any:
        request = Request(environ)
        with self._lock:
            response, _exchange = self._serve(request)
        return response(environ, start_response)

    def _serve(self, request: Request) -> tuple[Response, Exchange | None]:
        path = request.path
        if self.prefix and path.startswith(self.prefix):
            path = path[len(self.prefix) :]
        if request.method == "POST" and path == self._graphql_path():
            return self._graphql(request)
        adapter = self._map.bind("127.0.0.1", path_info=path)
        try:
            operation, arguments = adapter.match(path, method=request.method)
        except (NotFound, MethodNotAllowed) as exc:
            self.violations.append(f"{request.method} {request.path}: not an operation the fake serves")
            return Response(json.dumps({"message": "Not Found"}), status=exc.code or 404), None
        if operation == "blob":
            return self._blob(request, arguments["token"]), None
        body = request.get_data()
        headers = dict(request.headers.items())
        url = request.url
        if self.validate:
            problems = request_violations(request.method, url, headers, body)
            self.violations.extend(problems)
            if problems:
                return self._finish(
                    request,
                    operation,
                    422,
                    {"message": "Invalid request.", "documentation_url": DOCS},
                    {},
                    body,
                    headers,
                )
        status, payload, extra_headers = self._dispatch(request, operation, arguments, body)
        return self._finish(request, operation, status, payload, extra_headers, body, headers)

    def _graphql_path(self) -> str:
        """Where GraphQL is, as seen after the REST prefix is cut: `/graphql` on github.com, `/api/graphql`
        beside Enterprise Server's `/api/v3` (the prefix is not cut from it)."""
        return "/api/graphql" if self.prefix else "/graphql"

    def _graphql(self, request: Request) -> tuple[Response, Exchange]:
        """The one GraphQL query rounds asks, `viewer { login }`: whose token this is. GraphQL is outside
        the REST description, so it is not validated against it; any other query gets GraphQL's error."""
        body = request.get_data()
        try:
            token = self._authenticate(request)
            self._spend_rate_limit()
            fault = next((f for f in self.faults if f.matches("graphql")), None)
            if fault is not None:
                fault.times -= 1
                raise ApiError(fault.status, fault.message, fault.headers)
        except ApiError as error:
            payload: Any = {"message": error.message, "documentation_url": DOCS}
            status, headers = error.status, error.headers
        else:
            query = str((json.loads(body or b"{}") or {}).get("query") or "")
            if re.fullmatch(r"\s*(query\s*)?\{\s*viewer\s*\{\s*login\s*\}\s*\}\s*", query):
                payload = {"data": {"viewer": {"login": token.login}}}
            else:
                payload = {"errors": [{"message": f"the fake serves only viewer {{ login }}, not {query!r}"}]}
            status, headers = 200, {}
        exchange = Exchange("graphql", "POST", request.path, {}, status, json.loads(body) if body else None)
        self.exchanges.append(exchange)
        data = json.dumps(payload).encode()
        return Response(
            data, status=status, headers={"Content-Type": "application/json", **headers}
        ), exchange

    def _finish(
        self,
        request: Request,
        operation: str,
        status: int,
        payload: Any,
        extra_headers: dict[str, str],
        body: bytes,
        request_headers: dict[str, str],
    ) -> tuple[Response, Exchange]:
        headers = {
            "X-GitHub-Request-Id": secrets.token_hex(8).upper(),
            "X-RateLimit-Limit": str(self.rate.limit),
            "X-RateLimit-Remaining": str(max(self.rate.remaining, 0)),
            "X-RateLimit-Reset": str(self.rate.reset),
            "X-RateLimit-Used": str(self.rate.used),
            "X-RateLimit-Resource": "core",
            **extra_headers,
        }
        data = b""
        if payload is not None and status != 304:
            data = json.dumps(payload).encode()
            headers["Content-Type"] = "application/json; charset=utf-8"
        if request.method == "GET" and status == 200:
            etag = 'W/"' + hashlib.sha256(data).hexdigest() + '"'
            headers["ETag"] = etag
            if request.headers.get("If-None-Match") == etag:
                status, data = 304, b""
                headers.pop("Content-Type", None)
                self.rate.remaining += 1  # a 304 does not count against the primary limit
        if self.validate:
            self.violations.extend(
                response_violations(request.method, request.url, request_headers, body, status, headers, data)
            )
        try:
            request_json = json.loads(body) if body else None
        except ValueError:
            request_json = None
        exchange = Exchange(
            operation, request.method, request.path, dict(request.args.items()), status, request_json
        )
        self.exchanges.append(exchange)
        return Response(data or None, status=status, headers=headers), exchange

    def _dispatch(
        self, request: Request, operation: str, arguments: dict[str, Any], body: bytes
    ) -> tuple[int, Any, dict[str, str]]:
        try:
            token = self._authenticate(request)
            if operation != "rate-limit/get":
                self._spend_rate_limit()
            fault = next((f for f in self.faults if f.matches(operation)), None)
            if fault is not None and fault.skip > 0:
                fault.skip -= 1
                fault = None
            if fault is not None and not fault.applied:
                fault.times -= 1
                raise ApiError(fault.status, fault.message, fault.headers)
            repo = None
            if "owner" in arguments:
                repo = found(self.state.repo(arguments.pop("owner"), arguments.pop("repo")))
            self._authorise(token, operation, request.method)
            wait = self.content_limit.refusal(request.method, self._now()) if self.content_limit else None
            if wait is not None:
                raise ApiError(403, SECONDARY_LIMIT_MESSAGE, retry_after(wait))
            try:
                payload_in = json.loads(body) if body else None
            except ValueError as exc:
                raise ApiError(400, "Problems parsing JSON") from exc
            result = self._handlers[operation](request, repo, token, payload_in, **arguments)
            if fault is not None:  # applied, and now its answer is lost
                fault.times -= 1
                raise ApiError(fault.status, fault.message, fault.headers)
        except ApiError as error:
            payload = {"message": error.message, "documentation_url": DOCS, "status": str(error.status)}
            payload.update(error.extra)
            return error.status, payload, error.headers
        if isinstance(result, tuple) and len(result) == 3:
            return result
        if isinstance(result, tuple):
            return result[0], result[1], {}
        return 200, result, {}

    # --- auth and limits ----------------------------------------------------------------------
    def _authenticate(self, request: Request) -> Token:
        header = request.headers.get("Authorization", "")
        scheme, _, secret = header.partition(" ")
        if not secret or scheme.lower() not in ("token", "bearer"):
            raise ApiError(401, "Requires authentication")
        token = self.tokens.get(secret)
        if token is None:
            raise ApiError(401, "Bad credentials")
        return token

    def _authorise(self, token: Token, operation: str, method: str) -> None:
        permission, level = PERMISSIONS.get(
            operation, ("issues", "read" if method in _READ_ONLY else "write")
        )
        if permission is None:
            return
        granted = token.permissions.get(permission)
        if granted == "write" or granted == level:
            return
        raise ApiError(
            403,
            "Resource not accessible by integration",
            {"X-Accepted-GitHub-Permissions": f"{permission}={level}"},
        )

    def _spend_rate_limit(self) -> None:
        if self.rate.remaining <= 0:
            raise ApiError(
                403,
                "API rate limit exceeded for installation ID 1. If you reach out to GitHub Support for help, "
                "please include the request ID.",
                {"X-RateLimit-Remaining": "0", "X-RateLimit-Reset": str(self.rate.reset)},
            )
        self.rate.remaining -= 1

    # --- paging -------------------------------------------------------------------------------
    def _page(self, request: Request, items: list[Any]) -> tuple[int, list[Any], dict[str, str]]:
        per_page = min(int(request.args.get("per_page", 30)), 100)
        page = max(int(request.args.get("page", 1)), 1)
        last = max((len(items) + per_page - 1) // per_page, 1)
        chunk = items[(page - 1) * per_page : page * per_page]
        links = []

        def url(number: int) -> str:
            query = {**request.args.to_dict(), "page": str(number)}
            return f"{request.base_url}?{urlencode(query)}"

        if page < last:
            links += [f'<{url(page + 1)}>; rel="next"', f'<{url(last)}>; rel="last"']
        if page > 1:
            links += [f'<{url(1)}>; rel="first"', f'<{url(page - 1)}>; rel="prev"']
        return 200, chunk, ({"Link": ", ".join(links)} if links else {})

    # --- operations: repository ---------------------------------------------------------------
    def _op_repos_get(self, request: Request, repo: Repo, token: Token, body: Any) -> Any:
        return self.state.repository_json(repo)

    def _op_rate_limit_get(self, request: Request, repo: None, token: Token, body: Any) -> Any:
        core = {
            "limit": self.rate.limit,
            "remaining": self.rate.remaining,
            "reset": self.rate.reset,
            "used": self.rate.used,
        }
        search = {"limit": 30, "remaining": 30, "reset": self.rate.reset, "used": 0}
        return {"resources": {"core": core, "search": search}, "rate": core}

    def _op_repos_get_collaborator_permission_level(
        self, request: Request, repo: Repo, token: Token, body: Any, username: str
    ) -> Any:
        role = repo.collaborators.get(username)
        if role is None:
            raise ApiError(404, f"{username} is not a user")
        # GitHub's description of this operation: "The `permission` attribute provides the legacy base roles
        # of `admin`, `write`, `read`, and `none`, where the `maintain` role is mapped to `write` and the
        # `triage` role is mapped to `read`. The `role_name` attribute provides the name of the assigned role"
        permission = LEGACY_PERMISSIONS[role]
        at_least = ROLES[ROLES.index(role) :]
        user = {
            **self.state.user(username),
            "role_name": role,
            "permissions": {
                "admin": role == "admin",
                "maintain": "maintain" in at_least,
                "push": "write" in at_least,
                "triage": "triage" in at_least,
                "pull": True,
            },
        }
        return {"permission": permission, "role_name": role, "user": user}

    # --- operations: issues -------------------------------------------------------------------
    def _issue(self, repo: Repo, number: int, method: str = "GET") -> Any:
        if not repo.has_issues:
            raise ApiError(410, "Issues are disabled for this repo")
        # REST "Get an issue" / "Update an issue": 410 Gone for an issue deleted from a repository the
        # token can read; 301 Moved Permanently, with the new location, for one transferred to another
        # repository (documented for GET and PATCH only; "Create an issue comment" documents 404 and 410)
        if number in repo.deleted:
            raise ApiError(410, ISSUE_DELETED)
        moved = repo.transferred.get(number)
        if moved is not None:
            if method in ("GET", "PATCH"):
                raise ApiError(301, "Moved Permanently", {"Location": moved})
            raise ApiError(404, "Not Found")
        return found(repo.issues.get(number))

    def _op_issues_list_for_repo(self, request: Request, repo: Repo, token: Token, body: Any) -> Any:
        # with issues disabled the listing is empty (the description documents no 410 here); writes get 410
        state = request.args.get("state", "open")
        wanted = [name.strip().lower() for name in request.args.get("labels", "").split(",") if name.strip()]
        since = request.args.get("since")
        items = [
            i
            for i in repo.issues.values()
            if (state == "all" or i.state == state)
            and all(name in {label.lower() for label in i.labels} for name in wanted)
            and (since is None or ts(i.updated_at) >= since)
        ]
        key = {"created": "created_at", "updated": "updated_at", "comments": "comments"}[
            request.args.get("sort", "created")
        ]
        items.sort(
            key=lambda i: (getattr(i, key), i.number), reverse=request.args.get("direction", "desc") == "desc"
        )
        status, chunk, headers = self._page(request, items)
        return status, [self.state.issue_json(repo, i) for i in chunk], headers

    def _op_issues_create(self, request: Request, repo: Repo, token: Token, body: Any) -> Any:
        if not repo.has_issues:
            raise ApiError(410, "Issues are disabled for this repo")
        body = body or {}
        text = body.get("body") or ""
        check_body_length(text, "Issue")
        labels = [label if isinstance(label, str) else label["name"] for label in body.get("labels", [])]
        issue = self.state.create_issue(repo, str(body["title"]), text, labels, token.login)
        location = f"{self.state.repo_url(repo)}/issues/{issue.number}"
        return 201, self.state.issue_json(repo, issue), {"Location": location}

    def _op_issues_get(self, request: Request, repo: Repo, token: Token, body: Any, issue_number: int) -> Any:
        return self.state.issue_json(repo, self._issue(repo, issue_number, request.method))

    def _op_issues_update(
        self, request: Request, repo: Repo, token: Token, body: Any, issue_number: int
    ) -> Any:
        issue = self._issue(repo, issue_number, request.method)
        body = body or {}
        if "body" in body:
            text = body["body"] or ""
            check_body_length(text, "Issue")
            issue.body = text
        if "title" in body and body["title"] is not None:
            issue.title = str(body["title"])
        if "labels" in body:
            names = [label if isinstance(label, str) else label["name"] for label in body["labels"]]
            for name in names:
                self.state.ensure_label(repo, name)
            issue.labels = self.state.label_names(repo, names)
        if "state" in body:
            self.state.set_state(issue, body["state"], body.get("state_reason"))
        self.state.touch(issue)
        return self.state.issue_json(repo, issue)

    def _op_issues_list_comments(
        self, request: Request, repo: Repo, token: Token, body: Any, issue_number: int
    ) -> Any:
        self._issue(repo, issue_number)
        since = request.args.get("since")
        comments = [
            c
            for c in repo.comments.values()
            if c.issue_number == issue_number and (since is None or ts(c.updated_at) >= since)
        ]
        status, chunk, headers = self._page(request, sorted(comments, key=lambda c: c.id))
        return status, [self.state.comment_json(repo, c) for c in chunk], headers

    def _op_issues_create_comment(
        self, request: Request, repo: Repo, token: Token, body: Any, issue_number: int
    ) -> Any:
        issue = self._issue(repo, issue_number, request.method)
        if issue.locked and not self._may_comment_when_locked(repo, token):
            raise ApiError(403, ISSUE_LOCKED, documentation_url=LOCKING_DOCS)
        text = (body or {}).get("body", "")
        check_body_length(text, "IssueComment")
        now = self.state.now()
        comment = Comment(self.state.next_id(), issue_number, text, token.login, now, now)
        repo.comments[comment.id] = comment
        issue.comments += 1
        self.state.touch(issue)
        location = f"{self.state.repo_url(repo)}/issues/comments/{comment.id}"
        return 201, self.state.comment_json(repo, comment), {"Location": location}

    @staticmethod
    def _may_comment_when_locked(repo: Repo, token: Token) -> bool:
        """ "Locking conversations" (GitHub Docs): once locked, "only people with write access and repository
        owners and admins can add, hide, and delete comments". Apps, a workflow's GITHUB_TOKEN among them, are
        refused whatever their `issues: write` (the 403 quoted in probot/stale#25, renovatebot/renovate#6215,
        semantic-release/github#221)."""
        if token.kind != "user":
            return False
        return token.login.lower() == repo.owner.lower() or repo.collaborators.get(token.login) in (
            "write",
            "maintain",
            "admin",
        )

    def _comment(self, repo: Repo, comment_id: int) -> Comment:
        return found(repo.comments.get(comment_id))

    def _op_issues_get_comment(
        self, request: Request, repo: Repo, token: Token, body: Any, comment_id: int
    ) -> Any:
        return self.state.comment_json(repo, self._comment(repo, comment_id))

    def _op_issues_update_comment(
        self, request: Request, repo: Repo, token: Token, body: Any, comment_id: int
    ) -> Any:
        comment = self._comment(repo, comment_id)
        comment.body = body["body"]
        comment.updated_at = self.state.now()
        return self.state.comment_json(repo, comment)

    def _op_reactions_list_for_issue_comment(
        self, request: Request, repo: Repo, token: Token, body: Any, comment_id: int
    ) -> Any:
        self._comment(repo, comment_id)
        content = request.args.get("content")
        reactions = [r for r in repo.reactions.get(comment_id, []) if content in (None, r.content)]
        status, chunk, headers = self._page(request, reactions)
        return status, [self.state.reaction_json(r) for r in chunk], headers

    def _op_reactions_create_for_issue_comment(
        self, request: Request, repo: Repo, token: Token, body: Any, comment_id: int
    ) -> Any:
        self._comment(repo, comment_id)
        content = body["content"]
        existing = [
            r for r in repo.reactions.get(comment_id, []) if r.user == token.login and r.content == content
        ]
        if existing:
            return 200, self.state.reaction_json(existing[0])
        reaction = Reaction(self.state.next_id(), comment_id, token.login, content, self.state.now())
        repo.reactions.setdefault(comment_id, []).append(reaction)
        return 201, self.state.reaction_json(reaction)

    # --- operations: labels -------------------------------------------------------------------
    def _op_issues_list_labels_for_repo(self, request: Request, repo: Repo, token: Token, body: Any) -> Any:
        labels = sorted(repo.labels.values(), key=lambda label: label.id)
        status, chunk, headers = self._page(request, labels)
        return status, [self.state.label_json(repo, label) for label in chunk], headers

    def _op_issues_create_label(self, request: Request, repo: Repo, token: Token, body: Any) -> Any:
        name = body["name"]
        if name.lower() in repo.labels:
            raise invalid(resource="Label", code="already_exists", field="name")
        if len(name) > 50 or not re.fullmatch(r"[0-9a-fA-F]{6}", body.get("color", "ededed")):
            raise invalid(resource="Label", code="invalid", field="name" if len(name) > 50 else "color")
        label = Label(self.state.next_id(), name, body.get("color", "ededed"), body.get("description"))
        repo.labels[name.lower()] = label
        location = f"{self.state.repo_url(repo)}/labels/{name}"
        return 201, self.state.label_json(repo, label), {"Location": location}

    def _op_issues_get_label(self, request: Request, repo: Repo, token: Token, body: Any, name: str) -> Any:
        return self.state.label_json(repo, found(repo.labels.get(name.lower())))

    def _op_issues_add_labels(
        self, request: Request, repo: Repo, token: Token, body: Any, issue_number: int
    ) -> Any:
        issue = self._issue(repo, issue_number)
        names = body if isinstance(body, list) else (body or {}).get("labels", [])
        names = [n if isinstance(n, str) else n["name"] for n in names]
        for name in names:
            self.state.ensure_label(repo, name)
        issue.labels = self.state.label_names(repo, [*issue.labels, *names])
        self.state.touch(issue)
        return [self.state.label_json(repo, self.state.ensure_label(repo, n)) for n in issue.labels]

    def _op_issues_remove_label(
        self, request: Request, repo: Repo, token: Token, body: Any, issue_number: int, name: str
    ) -> Any:
        issue = self._issue(repo, issue_number)
        if name.lower() not in {n.lower() for n in issue.labels}:
            raise ApiError(404, "Label does not exist")
        issue.labels = [n for n in issue.labels if n.lower() != name.lower()]
        self.state.touch(issue)
        return [self.state.label_json(repo, self.state.ensure_label(repo, n)) for n in issue.labels]

    # --- operations: search (the bot does not use it: it lags) ---------------------------------
    def _op_search_issues_and_pull_requests(
        self, request: Request, repo: None, token: Token, body: Any
    ) -> Any:
        query = request.args["q"]
        qualifiers = dict(re.findall(r"(\w+):(\"[^\"]*\"|\S+)", query))
        words = [w.lower() for w in re.sub(r"\w+:(\"[^\"]*\"|\S+)", " ", query).split()]
        target = self.state.repos.get(qualifiers.get("repo", "").lower())
        visible_before = self._now() - self.search_lag
        items = []
        for candidate in [target] if target else self.state.repos.values():
            for issue in candidate.issues.values():
                if issue.updated_at > visible_before:
                    continue  # not indexed yet
                label = qualifiers.get("label", "").strip('"').lower()
                if label and label not in {n.lower() for n in issue.labels}:
                    continue
                text = f"{issue.title}\n{issue.body}".lower()
                if all(word.strip('"') in text for word in words):
                    items.append((candidate, issue))
        status, chunk, headers = self._page(request, items)
        payload = {
            "total_count": len(items),
            "incomplete_results": False,
            "items": [self.state.search_item_json(r, i) for r, i in chunk],
        }
        return status, payload, headers

    # --- operations: git refs and contents ----------------------------------------------------
    def _op_git_get_ref(self, request: Request, repo: Repo, token: Token, body: Any, ref: str) -> Any:
        full = f"refs/{ref}"
        if full not in repo.refs:
            raise ApiError(404, "Not Found")
        return self.state.ref_json(repo, full)

    def _op_git_create_ref(self, request: Request, repo: Repo, token: Token, body: Any) -> Any:
        ref = body["ref"]
        if not ref.startswith("refs/") or ref.count("/") < 2:
            raise ApiError(422, "Reference name is not valid")
        if ref in repo.refs:
            raise ApiError(422, "Reference already exists")
        repo.refs[ref] = body["sha"]
        return 201, self.state.ref_json(repo, ref), {"Location": f"{self.state.repo_url(repo)}/git/{ref}"}

    def _op_git_update_ref(self, request: Request, repo: Repo, token: Token, body: Any, ref: str) -> Any:
        full = f"refs/{ref}"
        if full not in repo.refs:
            raise ApiError(422, "Reference does not exist")
        repo.refs[full] = body["sha"]
        return self.state.ref_json(repo, full)

    def _op_repos_get_content(self, request: Request, repo: Repo, token: Token, body: Any, path: str) -> Any:
        branch = request.args.get("ref", repo.default_branch)
        if (branch, path) not in repo.files:
            raise ApiError(404, "Not Found")
        return self.state.content_json(repo, branch, path)

    def _op_repos_create_or_update_file_contents(
        self, request: Request, repo: Repo, token: Token, body: Any, path: str
    ) -> Any:
        branch = body.get("branch", repo.default_branch)
        if f"refs/heads/{branch}" not in repo.refs:
            raise ApiError(404, f"Branch {branch} not found")
        data = base64.b64decode(body["content"])
        existing = repo.files.get((branch, path))
        if existing is not None:
            if "sha" not in body:
                raise ApiError(422, 'Invalid request.\n\n"sha" wasn\'t supplied.')
            if body["sha"] != git_sha(existing):
                raise ApiError(409, f"{path} does not match {body['sha']}")
        elif body.get("sha"):
            raise ApiError(409, f"{path} does not exist")
        repo.files[(branch, path)] = data
        repo.refs[f"refs/heads/{branch}"] = git_sha(data + branch.encode())
        return (200 if existing is not None else 201), self.state.file_commit_json(repo, branch, path)

    # --- operations: pull requests ------------------------------------------------------------
    def _op_pulls_list(self, request: Request, repo: Repo, token: Token, body: Any) -> Any:
        head = request.args.get("head")
        state = request.args.get("state", "open")
        pulls = [
            p
            for p in repo.pulls.values()
            if (state == "all" or p.state == state) and (head is None or f"{repo.owner}:{p.head}" == head)
        ]
        status, chunk, headers = self._page(request, sorted(pulls, key=lambda p: -p.number))
        return status, [self.state.pull_json(repo, p) for p in chunk], headers

    def _op_pulls_create(self, request: Request, repo: Repo, token: Token, body: Any) -> Any:
        # A workflow's GITHUB_TOKEN may open pull requests only where "Allow GitHub Actions to create and
        # approve pull requests" is on, whatever its `pull-requests: write`; an App's token is not affected
        # (GitHub changelog 2022-05-03, "GitHub Actions: Prevent GitHub Actions from creating and approving
        # pull requests"; the 403 as quoted in peter-evans/create-pull-request#3979).
        if token.kind == "workflow" and not repo.can_approve_pull_request_reviews:
            raise ApiError(403, ACTIONS_MAY_NOT_OPEN, documentation_url=PULLS_CREATE_DOCS)
        if body.get("draft") and not repo.drafts_allowed:
            # "Create a pull request" in GitHub's REST docs: drafts only in public repositories, or on
            # GitHub Team and Enterprise Cloud in private ones too
            raise ApiError(422, DRAFTS_NOT_SUPPORTED, documentation_url=PULLS_CREATE_DOCS)
        head, base = body["head"].split(":")[-1], body["base"]
        for branch in (head, base):
            if f"refs/heads/{branch}" not in repo.refs:
                raise invalid(
                    resource="PullRequest", field="head" if branch == head else "base", code="invalid"
                )
        if any(p.head == head and p.base == base and p.state == "open" for p in repo.pulls.values()):
            raise invalid(
                resource="PullRequest",
                code="custom",
                message=f"A pull request already exists for {repo.owner}:{head}.",
            )
        number = repo.next_number()
        pull = Pull(
            number,
            body.get("title", head),
            body.get("body") or "",
            head,
            base,
            bool(body.get("draft")),
            token.login,
            self.state.now(),
        )
        repo.pulls[number] = pull
        location = f"{self.state.repo_url(repo)}/pulls/{number}"
        return 201, self.state.pull_json(repo, pull), {"Location": location}

    # --- operations: artifacts ----------------------------------------------------------------
    def _op_actions_list_artifacts_for_repo(
        self, request: Request, repo: Repo, token: Token, body: Any
    ) -> Any:
        name = request.args.get("name")
        artifacts = sorted(
            (a for a in repo.artifacts.values() if name in (None, a.name)), key=lambda a: -a.id
        )
        status, chunk, headers = self._page(request, artifacts)
        payload = {
            "total_count": len(artifacts),
            "artifacts": [self.state.artifact_json(repo, a) for a in chunk],
        }
        return status, payload, headers

    def _artifact(self, repo: Repo, artifact_id: int) -> Any:
        return found(repo.artifacts.get(artifact_id))

    def _op_actions_get_artifact(
        self, request: Request, repo: Repo, token: Token, body: Any, artifact_id: int
    ) -> Any:
        return self.state.artifact_json(repo, self._artifact(repo, artifact_id))

    def _op_actions_download_artifact(
        self, request: Request, repo: Repo, token: Token, body: Any, artifact_id: int, archive_format: str
    ) -> Any:
        artifact = self._artifact(repo, artifact_id)
        if artifact_id in repo.expired_artifacts:
            raise ApiError(410, "Artifact has expired")
        blob = secrets.token_urlsafe(12)
        expires = self._now() + self.signed_url_ttl
        self._signed[blob] = (artifact.id, expires)
        query = urlencode({"sig": secrets.token_urlsafe(16), "se": expires.strftime("%Y-%m-%dT%H:%M:%SZ")})
        # a different origin (localhost, not 127.0.0.1): clients must not forward the token there
        location = f"http://localhost:{self.port}/_blobs/{blob}?{query}"
        return 302, None, {"Location": location}

    def _blob(self, request: Request, blob: str) -> Response:
        if request.headers.get("Authorization"):
            self.violations.append("the token was forwarded to the signed artifact URL")
        entry = self._signed.get(blob)
        if entry is None or entry[1] < self._now():
            return Response(b"AuthenticationFailed: signature expired", status=403)
        artifact = self.repo.artifacts.get(entry[0]) or next(
            a for r in self.state.repos.values() for a in r.artifacts.values() if a.id == entry[0]
        )
        return Response(artifact.data, status=200, headers={"Content-Type": "application/zip"})


__all__ = ["ACTIONS_MAY_NOT_OPEN", "ApiError", "Exchange", "FakeGitHub", "Fault", "TokenKind", "found"]
