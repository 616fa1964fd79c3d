"""GitHub's published REST description, found (or fetched) and trimmed to the operations the bot uses.

The description ships in the npm package `@octokit/openapi` (pinned below). CI fetches it into `.ci/cache/`
before the tests run; a developer can do the same with

    python -m tests.fake_github.spec

Tests never fetch it themselves (no test reaches the internet): without the file, tests marked `github_spec`
skip, unless `CI` is set, where they fail.

The full description is 13 MB with ~1,200 operations; the trimmed one keeps only the operations below and the
components they reference, so `openapi-core` loads it in well under a second. Known mismatches between the
description and the live API are patched in `_patch`, one comment each.
"""

from __future__ import annotations

import copy
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
from functools import cache
from pathlib import Path
from typing import Any

from openapi_core import Config, OpenAPI

PACKAGE = "@octokit/openapi"
VERSION = "23.0.2"
FILE_IN_PACKAGE = "package/generated/api.github.com.json"
FILE_NAME = "api.github.com.json"
SHA256 = "829b4bebb19a53133289f7b0bc819f4f1118115821db2ca9f25e9ee995a7da2a"
PROJECT_ROOT = Path(__file__).resolve().parents[2]
CACHE_DIR = PROJECT_ROOT / ".ci" / "cache"

# Every operation the bot (tracker, commands, fix pull requests, state artifacts) may call.
OPERATIONS = frozenset(
    {
        "repos/get",
        "rate-limit/get",
        "issues/list-for-repo",
        "issues/get",
        "issues/create",
        "issues/update",
        "issues/list-comments",
        "issues/get-comment",
        "issues/create-comment",
        "issues/update-comment",
        "issues/list-labels-for-repo",
        "issues/get-label",
        "issues/create-label",
        "issues/add-labels",
        "issues/remove-label",
        "reactions/create-for-issue-comment",
        "reactions/list-for-issue-comment",
        "repos/get-collaborator-permission-level",
        "git/get-ref",
        "git/create-ref",
        "git/update-ref",
        "repos/get-content",
        "repos/create-or-update-file-contents",
        "pulls/create",
        "pulls/list",
        # fix proposals: read a pull request's state (merged?), update its description
        "pulls/get",
        "pulls/update",
        "actions/list-artifacts-for-repo",
        "actions/get-artifact",
        "actions/download-artifact",
        # `rounds doctor` (is the schedule still enabled? may Actions open pull requests?) and the command
        # catch-up (actions_routes.py)
        "actions/get-workflow",
        "actions/get-github-actions-default-workflow-permissions-repository",
        "issues/list-comments-for-repo",
        # not used by the bot (search lags); the fake serves it to show why
        "search/issues-and-pull-requests",
    }
)
_METHODS = ("get", "put", "post", "patch", "delete")
# Bump when `_patch` or OPERATIONS change, so a stale trimmed copy is not reused.
_TRIM_REVISION = "6"


class DescriptionMissing(LookupError):
    """GitHub's REST description is not in the cache folder."""


def description_path(cache_dir: Path = CACHE_DIR) -> Path | None:
    """The cached description, if present and intact."""
    path = cache_dir / FILE_NAME
    if not path.is_file():
        return None
    if hashlib.sha256(path.read_bytes()).hexdigest() != SHA256:
        raise DescriptionMissing(
            f"{path} is not {PACKAGE}@{VERSION}'s {FILE_NAME} (sha256 differs); delete it and fetch it again"
        )
    return path


def fetch(cache_dir: Path = CACHE_DIR) -> Path:
    """Download the pinned package with `npm pack`, keep only the description (for developers, not tests)."""
    existing = description_path(cache_dir)
    if existing:
        return existing
    npm = shutil.which("npm")
    if npm is None:
        raise DescriptionMissing("npm is needed to fetch GitHub's REST description")
    cache_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=cache_dir) as scratch:
        subprocess.run(
            [npm, "pack", "--silent", f"{PACKAGE}@{VERSION}"], cwd=scratch, check=True, capture_output=True
        )
        tarball = next(Path(scratch).glob("*.tgz"))
        with tarfile.open(tarball) as archive:
            member = archive.extractfile(FILE_IN_PACKAGE)
            if member is None:
                raise DescriptionMissing(f"{tarball.name} has no {FILE_IN_PACKAGE}")
            (Path(scratch) / FILE_NAME).write_bytes(member.read())
        os.replace(Path(scratch) / FILE_NAME, cache_dir / FILE_NAME)
    path = description_path(cache_dir)
    assert path is not None
    return path


def trimmed_description(cache_dir: Path = CACHE_DIR) -> dict[str, Any]:
    """The description cut down to OPERATIONS and patched; cached next to the full file."""
    source = description_path(cache_dir)
    if source is None:
        raise DescriptionMissing(
            f"{cache_dir / FILE_NAME} is missing: run `python -m tests.fake_github.spec` "
            f"(npm pack {PACKAGE}@{VERSION})"
        )
    # the operations' digest is in the name too: a copy trimmed for another set is never reused
    operations = hashlib.sha256(",".join(sorted(OPERATIONS)).encode()).hexdigest()[:8]
    trimmed = cache_dir / f"api.github.com.trimmed-{VERSION}-r{_TRIM_REVISION}-{operations}.json"
    if trimmed.is_file():
        return json.loads(trimmed.read_text(encoding="utf-8"))
    spec = _patch(_trim(json.loads(source.read_text(encoding="utf-8"))))
    handle, temp = tempfile.mkstemp(dir=cache_dir, suffix=".json")
    with os.fdopen(handle, "w", encoding="utf-8") as out:
        json.dump(spec, out)
    os.replace(temp, trimmed)
    return spec


@cache
def load_openapi(cache_dir: Path = CACHE_DIR) -> OpenAPI:
    """An openapi-core validator over the trimmed description (its self-check skipped: 18 s on GitHub's)."""
    return OpenAPI.from_dict(trimmed_description(cache_dir), config=Config(spec_validator_cls=None))


def _trim(spec: dict[str, Any]) -> dict[str, Any]:
    paths: dict[str, Any] = {}
    for path, item in spec["paths"].items():
        kept = {m: op for m, op in item.items() if m in _METHODS and op.get("operationId") in OPERATIONS}
        if kept:
            shared = {k: v for k, v in item.items() if k not in _METHODS}
            paths[path] = {**shared, **kept}
    found = {op["operationId"] for item in paths.values() for m, op in item.items() if m in _METHODS}
    if found != OPERATIONS:
        raise DescriptionMissing(f"operations missing from the description: {sorted(OPERATIONS - found)}")
    for item in paths.values():
        for method in _METHODS:
            if method in item:
                _drop_examples(item[method])
    components: dict[str, dict[str, Any]] = {}
    pending = list(_refs(paths))
    while pending:
        ref = pending.pop()
        _, _, kind, name = ref.split("/", 3)
        if name in components.setdefault(kind, {}):
            continue
        node = copy.deepcopy(spec["components"][kind][name])
        _drop_examples(node)
        components[kind][name] = node
        pending.extend(_refs(node))
    return {
        "openapi": spec["openapi"],
        "info": spec["info"],
        # The fake listens on 127.0.0.1 (optionally under /api/v3, like GitHub Enterprise Server).
        "servers": [{"url": "/"}, {"url": "/api/v3"}],
        "paths": paths,
        "components": components,
    }


def _drop_examples(node: Any) -> None:
    """Examples are documentation, and 10 of 44 fail their own schemas: never validate against them."""
    if isinstance(node, dict):
        node.pop("examples", None)
        node.pop("example", None)
        for value in node.values():
            _drop_examples(value)
    elif isinstance(node, list):
        for value in node:
            _drop_examples(value)


def _refs(node: Any) -> set[str]:
    found: set[str] = set()
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str):
            found.add(ref)
        for value in node.values():
            found |= _refs(value)
    elif isinstance(node, list):
        for value in node:
            found |= _refs(value)
    return found


_ERROR = {"application/json": {"schema": {"$ref": "#/components/schemas/basic-error"}}}
# GitHub answers these from any endpoint (bad token, missing permission, rate limits, outages, unknown
# repository) though the description lists them on only some operations.
_GENERIC_RESPONSES = {
    "401": {"description": "Requires authentication", "content": _ERROR},
    "403": {"description": "Forbidden, or a secondary rate limit", "content": _ERROR},
    "404": {"description": "Resource not found", "content": _ERROR},
    "429": {"description": "Too many requests", "content": _ERROR},
    "500": {"description": "Internal server error", "content": _ERROR},
    "502": {"description": "Bad gateway", "content": _ERROR},
    "503": {"description": "Service unavailable", "content": _ERROR},
}


def _patch(spec: dict[str, Any]) -> dict[str, Any]:
    for item in spec["paths"].values():
        for method in _METHODS:
            op = item.get(method)
            if op is None:
                continue
            for status, response in _GENERIC_RESPONSES.items():
                op["responses"].setdefault(status, copy.deepcopy(response))
            if method == "get":
                # Any GET answers 304 to a matching If-None-Match; that is how the bot saves quota.
                op["responses"].setdefault("304", {"description": "Not modified"})

    # `nullable` enums without null in the enum: the live API does return null (e.g. an open issue's
    # `state_reason`), and JSON Schema's enum check would refuse it.
    _allow_null_in_nullable_enums(spec)

    # issues/add-labels: the live API accepts a bare JSON array of names, which is what PyGithub sends.
    add_labels = spec["paths"]["/repos/{owner}/{repo}/issues/{issue_number}/labels"]["post"]
    body_schema = add_labels["requestBody"]["content"]["application/json"]["schema"]
    body_schema["oneOf"].append({"type": "array", "minItems": 1, "items": {"type": "string"}})

    # The file-contents 409 response is a oneOf of two schemas that a conflict body satisfies both of.
    contents_put = spec["paths"]["/repos/{owner}/{repo}/contents/{path}"]["put"]
    conflict = contents_put["responses"]["409"]
    for media in conflict.get("content", {}).values():
        schema = media.get("schema", {})
        if "oneOf" in schema:
            schema["anyOf"] = schema.pop("oneOf")

    # Search responses require `search_type`, which the live API does not always send.
    search = spec["paths"]["/search/issues"]["get"]["responses"]["200"]["content"]["application/json"][
        "schema"
    ]
    if "search_type" in search.get("required", []):
        search["required"].remove("search_type")
    return spec


def _allow_null_in_nullable_enums(node: Any) -> None:
    if isinstance(node, dict):
        if node.get("nullable") and isinstance(node.get("enum"), list) and None not in node["enum"]:
            node["enum"] = [*node["enum"], None]
        for value in node.values():
            _allow_null_in_nullable_enums(value)
    elif isinstance(node, list):
        for value in node:
            _allow_null_in_nullable_enums(value)


def multi_segment_parameters(spec: dict[str, Any]) -> dict[str, set[str]]:
    """Path templates whose parameters may contain `/` (`x-multi-segment`), for the request matcher."""
    found: dict[str, set[str]] = {}
    for path, item in spec["paths"].items():
        for method in _METHODS:
            for parameter in item.get(method, {}).get("parameters", []):
                if "$ref" in parameter:
                    parameter = spec["components"]["parameters"][parameter["$ref"].rsplit("/", 1)[-1]]
                if parameter.get("x-multi-segment"):
                    found.setdefault(path, set()).add(parameter["name"])
    return found


if __name__ == "__main__":
    try:
        print(fetch())
    except (DescriptionMissing, subprocess.CalledProcessError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        sys.exit(1)
