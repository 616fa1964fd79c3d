"""Check one HTTP exchange (request and response) against GitHub's REST description with openapi-core.

Used by the fake GitHub for every request it serves, and by the cassette tests for every recorded exchange.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any
from urllib.parse import parse_qsl, quote, unquote, urlsplit

from openapi_core.datatypes import RequestParameters
from openapi_core.exceptions import OpenAPIError
from openapi_core.validation.request.exceptions import RequestValidationError
from openapi_core.validation.response.exceptions import ResponseValidationError
from werkzeug.datastructures import Headers, ImmutableMultiDict

from .spec import load_openapi, multi_segment_parameters, trimmed_description


@dataclass
class _Request:
    host_url: str
    path: str
    method: str
    body: bytes | None
    content_type: str
    parameters: RequestParameters


@dataclass
class _Response:
    status_code: int
    headers: Headers
    content_type: str
    data: bytes | None


@cache
def _multi_segment_patterns() -> list[tuple[re.Pattern[str], str]]:
    """Templates with parameters that may hold `/`: how to find them in a concrete path."""
    patterns = []
    for template, names in multi_segment_parameters(trimmed_description()).items():

        def group(match: re.Match[str], names: set[str] = names) -> str:
            name = match[1]
            return f"(?P<{name}>.+)" if name in names else f"(?P<{name}>[^/]+)"

        regex = "^(?:/api/v3)?" + re.sub(r"\{(\w+)\}", group, template)
        patterns.append((re.compile(regex + "$"), template))
    return patterns


def _encode_multi_segment(path: str) -> str:
    """openapi-core matches `{path}` to one segment; GitHub's `x-multi-segment` parameters span several."""
    for pattern, template in _multi_segment_patterns():
        match = pattern.match(path)
        if match:
            prefix = "/api/v3" if path.startswith("/api/v3/") else ""
            values = {k: quote(unquote(v), safe="") for k, v in match.groupdict().items()}
            return prefix + template.format(**values)
    return path


def _content_type(headers: Mapping[str, str]) -> str:
    for key, value in headers.items():
        if key.lower() == "content-type":
            return value
    return "application/json"


def build_request(method: str, url: str, headers: Mapping[str, str], body: bytes | None) -> _Request:
    parts = urlsplit(url)
    host_url = f"{parts.scheme}://{parts.netloc}/"
    query = ImmutableMultiDict(parse_qsl(parts.query, keep_blank_values=True))
    return _Request(
        host_url=host_url,
        path=_encode_multi_segment(parts.path),
        method=method.lower(),
        body=body or None,
        content_type=_content_type(headers) if body else "application/json",
        parameters=RequestParameters(
            query=query, header=Headers(list(headers.items())), cookie=ImmutableMultiDict()
        ),
    )


def build_response(status: int, headers: Mapping[str, str], body: bytes | None) -> _Response:
    content_type = _content_type(headers).split(";")[0].strip().lower() if body else ""
    return _Response(status, Headers(list(headers.items())), content_type, body or None)


def request_violations(method: str, url: str, headers: Mapping[str, str], body: bytes | None) -> list[str]:
    try:
        load_openapi().validate_request(build_request(method, url, headers, body))
    except RequestValidationError as exc:
        return [f"request {method} {urlsplit(url).path}: {_describe(exc)}"]
    except OpenAPIError as exc:  # unknown path, method or status
        return [f"request {method} {urlsplit(url).path}: {exc.__class__.__name__}: {exc}"]
    return []


def response_violations(
    method: str,
    url: str,
    request_headers: Mapping[str, str],
    request_body: bytes | None,
    status: int,
    headers: Mapping[str, str],
    body: bytes | None,
) -> list[str]:
    request = build_request(method, url, request_headers, request_body)
    try:
        load_openapi().validate_response(request, build_response(status, headers, body))
    except ResponseValidationError as exc:
        return [f"response {status} to {method} {urlsplit(url).path}: {_describe(exc)}"]
    except OpenAPIError as exc:
        return [f"response {status} to {method} {urlsplit(url).path}: {exc.__class__.__name__}: {exc}"]
    return []


def _describe(exc: Any) -> str:
    details = [str(exc)]
    cause = exc.__cause__
    while cause is not None:
        schema_errors = getattr(cause, "schema_errors", None)
        if schema_errors:
            details.extend(
                f"{'/'.join(map(str, e.absolute_path)) or '$'}: {e.message}" for e in schema_errors
            )
        else:
            details.append(str(cause))
        cause = cause.__cause__
    return "; ".join(details)
