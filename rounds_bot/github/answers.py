"""Reading GitHub's answers: permission headers, pagination links, error messages and validation details,
timestamps as GitHub writes them, JSON objects typed as such."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any, cast

import requests
from github import GithubException

JsonObject = dict[str, Any]


def missing_permission(headers: Mapping[str, Any]) -> str | None:
    """`x-accepted-github-permissions: issues=write; pull_requests=write` -> "`issues: write`" (or ...)."""
    accepted = header(headers, "x-accepted-github-permissions")
    if accepted:
        options = []
        for alternative in accepted.split(";"):
            parts = [p.strip().replace("=", ": ") for p in alternative.split(",") if p.strip()]
            if parts:
                options.append(" and ".join(f"`{p}`" for p in parts))
        if options:
            return " or ".join(options)
    scopes = header(headers, "x-accepted-oauth-scopes")
    if scopes:
        return f"OAuth scope `{scopes}`"
    return None


def header(headers: Mapping[str, Any] | None, name: str) -> str | None:
    for key, value in (headers or {}).items():
        if key.lower() == name:
            return str(value)
    return None


def next_link(headers: Mapping[str, Any]) -> str | None:
    link = header(headers, "link")
    if not link:
        return None
    for entry in requests.utils.parse_header_links(link):
        if entry.get("rel") == "next":
            return entry["url"]
    return None


def message_of(exc: GithubException) -> str:
    data = exc.data
    if isinstance(data, dict):
        return str(data.get("message") or "")
    return str(data or "")


def validation_details(data: Any) -> str:
    if not isinstance(data, dict) or not data.get("errors"):
        return ""
    parts = []
    for error in data["errors"]:
        if isinstance(error, dict):
            shown = ("resource", "field", "code", "message")
            parts.append(", ".join(f"{k}={v}" for k, v in error.items() if k in shown))
        else:
            parts.append(str(error))
    return " (" + "; ".join(parts) + ")"


def github_time(moment: datetime | None) -> str:
    if moment is None:
        return ""
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def json_object(data: Any) -> JsonObject:
    """An answer of an endpoint that returns one JSON object, typed as such."""
    return cast(JsonObject, data)
