"""Recorded exchanges, replayed with recording off, and checked against GitHub's REST description.

The cassettes in `tests/cassettes/github/` hold full HTTP exchanges of the tracker (as api.github.com,
tokens scrubbed). They replay without any server: the tracker must send exactly the recorded requests, and
every recorded request and response must satisfy GitHub's REST description.

Re-record them against the fake GitHub with
`ROUNDS_RECORD_GITHUB_CASSETTES=1 pytest tests/test_github_cassettes.py`.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
import vcr
import yaml
from fake_github import FakeGitHub
from fake_github.fixtures import BOT_PERMISSIONS, REPOSITORY, TOKEN, require_description
from fake_github.state import BOT_LOGIN
from fake_github.validation import request_violations, response_violations

from rounds_bot.errors import TrackerError
from rounds_bot.github.journal import Journal
from rounds_bot.github.ratelimit import CallBudget, Waiter
from rounds_bot.github.rest import GitHubApi, make_github
from rounds_bot.github.tracker import GitHubTracker
from rounds_bot.marker import MarkerState, write_marker
from rounds_bot.tracker.base import IssueDraft

pytestmark = pytest.mark.github_spec

CASSETTES = Path(__file__).parent / "cassettes" / "github"
RECORDING = os.environ.get("ROUNDS_RECORD_GITHUB_CASSETTES") == "1"
PUBLIC_API = "https://api.github.com"
LOCAL = re.compile(r"http://127\.0\.0\.1:\d+")


def draft(signature_id: str = "sig_cassette", text: str = "Body") -> IssueDraft:
    marker = write_marker(MarkerState(signature_id=signature_id, service="api", total_count=3))
    return IssueDraft(
        signature_id=signature_id,
        title="[api] KeyError: 'user'",
        body=f"{text}\n\n{marker}",
        labels=["rounds", "service:api"],
    )


def tracker(base_url: str, token: str = TOKEN) -> GitHubTracker:
    github = make_github(token, base_url, write_interval_seconds=0)
    api = GitHubApi(github, REPOSITORY, CallBudget(50), Waiter(sleep=lambda _s: None), backoff_seconds=0)
    return GitHubTracker(api, Journal.memory())


def _public(text: str) -> str:
    return LOCAL.sub(PUBLIC_API, text)


def _scrub_request(request):  # type: ignore[no-untyped-def]
    request.uri = _public(request.uri)
    return request


def _scrub_response(response: dict) -> dict:
    body = response["body"]["string"]
    if isinstance(body, bytes):
        body = body.decode("utf-8")
    response["body"]["string"] = _public(body).encode("utf-8")
    headers = response["headers"]
    for name in list(headers):
        if name.lower() in ("link", "location"):
            headers[name] = [_public(value) for value in headers[name]]
        if name.lower() in ("server", "date", "x-github-request-id"):
            headers[name] = {"server": ["github.com"], "date": ["Mon, 02 Mar 2026 09:00:00 GMT"]}.get(
                name.lower(), ["0000:0000:0000000:0000000:00000000"]
            )
    return response


def _cassette_vcr(record_mode: str) -> vcr.VCR:
    return vcr.VCR(
        cassette_library_dir=str(CASSETTES),
        record_mode=record_mode,
        match_on=["method", "scheme", "host", "port", "path", "query", "body"],
        filter_headers=["authorization"],
        filter_query_parameters=["access_token"],
        before_record_request=_scrub_request,
        before_record_response=_scrub_response,
        decode_compressed_response=True,
    )


@contextmanager
def exchanges(name: str, prepare=None) -> Iterator[str]:  # type: ignore[no-untyped-def]
    """Replay `name` (recording off) and yield the base URL; when recording, run against the fake instead."""
    if not RECORDING:
        with _cassette_vcr("none").use_cassette(f"{name}.yaml"):
            yield PUBLIC_API
        return
    with FakeGitHub(repository=REPOSITORY) as fake:
        fake.add_token(TOKEN, **BOT_PERMISSIONS)
        fake.add_token("read-only", issues="read")
        if prepare:
            prepare(fake)
        (CASSETTES / f"{name}.yaml").unlink(missing_ok=True)
        with _cassette_vcr("all").use_cassette(f"{name}.yaml"):
            yield fake.base_url
        assert fake.violations == []


def _closed_issue(fake: FakeGitHub) -> None:
    issue = fake.state.create_issue(
        fake.repo, "[api] KeyError: 'user'", draft().body, ["rounds", "service:api"], BOT_LOGIN
    )
    fake.state.set_state(issue, "closed", "completed")
    for name in ("rounds", "service:api"):
        fake.state.ensure_label(fake.repo, name)


def test_filing_a_new_issue_replays(tmp_path):
    require_description()
    with exchanges("file_new_issue") as base_url:
        ref = tracker(base_url).create(draft())
    assert ref.ref == "#1"


def test_reopening_a_regression_replays(tmp_path):
    require_description()
    with exchanges("reopen_regression", _closed_issue) as base_url:
        t = tracker(base_url)
        found = t.find("sig_cassette")
        assert (found.state, found.state_reason) == ("closed", "completed")
        reopened = t.update(found, draft(text="Body v2"), comment="Regression: 5 occurrences.", reopen=True)
    assert reopened.state == "open"


def test_a_missing_permission_replays_as_a_clear_error(tmp_path):
    require_description()
    with exchanges("missing_permission") as base_url, pytest.raises(TrackerError, match="`issues: write`"):
        tracker(base_url, token="read-only").create(draft())


@pytest.mark.parametrize("path", sorted(CASSETTES.glob("*.yaml")), ids=lambda p: p.stem)
def test_every_recorded_exchange_satisfies_the_description(path: Path):
    require_description()
    cassette = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert cassette["interactions"], path
    for interaction in cassette["interactions"]:
        request, response = interaction["request"], interaction["response"]
        assert "authorization" not in {k.lower() for k in request["headers"]}, "a token was recorded"
        request_headers = {k: v[0] for k, v in request["headers"].items()}
        request_body = request["body"].encode() if isinstance(request["body"], str) else request["body"]
        body = response["body"]["string"]
        body = body.encode() if isinstance(body, str) else body
        response_headers = {k: v[0] for k, v in response["headers"].items()}
        problems = request_violations(request["method"], request["uri"], request_headers, request_body)
        problems += response_violations(
            request["method"],
            request["uri"],
            request_headers,
            request_body,
            response["status"]["code"],
            response_headers,
            body,
        )
        assert problems == [], json.dumps(problems, indent=1)
